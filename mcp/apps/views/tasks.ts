// The task board view (list_tasks): a room's tasks in a column per status; a person moves a task to another
// status or assigns it to a member of the room through update_task, called through the host like any tool call.
import { el, errorOf, later, nameOf, namesOf, show, startView, type ToolResult, type ViewContext } from './ui.js';

interface Task {
  id: string;
  roomId: string;
  title: string;
  status: 'todo' | 'in_progress' | 'done';
  assigneeId: string | null;
  dueDate: string | null;
}
const STATUSES: { id: Task['status']; label: string }[] = [
  { id: 'todo', label: 'To do' },
  { id: 'in_progress', label: 'In progress' },
  { id: 'done', label: 'Done' },
];

const root = document.getElementById('app')!;
const names = new Map<string, string>();
let tasks: Task[] = [];
let members: string[] = [];
let roomId: string | null = null;

function render(ctx: ViewContext): void {
  const card = (t: Task) => {
    const move = el('select', { 'aria-label': 'Status', 'data-field': 'status' });
    for (const s of STATUSES) {
      const o = el('option', { value: s.id }, s.label) as HTMLOptionElement;
      o.selected = s.id === t.status;
      move.append(o);
    }
    move.addEventListener('change', () => later(update(ctx, t, { status: (move as HTMLSelectElement).value })));
    const assign = el('select', { 'aria-label': 'Assignee', 'data-field': 'assigneeId' });
    for (const id of ['', ...new Set([...members, ...(t.assigneeId ? [t.assigneeId] : [])])]) {
      const o = el('option', { value: id }, id ? nameOf(names, id) : 'Unassigned') as HTMLOptionElement;
      o.selected = id === (t.assigneeId ?? '');
      assign.append(o);
    }
    assign.addEventListener('change', () => {
      const v = (assign as HTMLSelectElement).value;
      later(update(ctx, t, { assigneeId: v || null }));
    });
    return el(
      'li',
      { class: 'card', 'data-task': t.id },
      el('div', { class: 'title' }, t.title),
      t.dueDate ? el('div', { class: 'muted' }, `due ${t.dueDate}`) : null,
      el('div', { class: 'row' }, move, assign),
    );
  };
  show(
    root,
    el(
      'div',
      { class: 'board' },
      ...STATUSES.map((s) => {
        const col = tasks.filter((t) => t.status === s.id);
        return el(
          'section',
          { class: 'column', 'data-status': s.id },
          el('h2', {}, `${s.label} (${col.length})`),
          el('ul', { class: 'cards' }, ...col.map(card)),
        );
      }),
    ),
  );
}

async function update(ctx: ViewContext, t: Task, change: Record<string, unknown>): Promise<void> {
  ctx.status('Saving…');
  try {
    const result = await ctx.call('update_task', { roomId: t.roomId, taskId: t.id, ...change });
    const error = errorOf(result);
    if (error) ctx.status(error, 'error');
    else {
      const saved = result.structuredContent as unknown as Task;
      tasks = tasks.map((x) => (x.id === saved.id ? saved : x));
      ctx.status(`Saved: ${saved.title}`, 'ok');
    }
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  }
  render(ctx);
}

/** The room's members, for the assignee choice (needs rooms:read; without it, the current assignees only). */
async function loadMembers(ctx: ViewContext): Promise<void> {
  if (!roomId) return;
  try {
    const result = await ctx.call('list_room_members', { roomId, limit: 200 });
    if (result.isError) return;
    namesOf(result, names);
    members = (result.structuredContent as { data: { userId: string }[] }).data.map((m) => m.userId);
    render(ctx);
  } catch {
    // a connection without the tool (toolsets, scopes): assignees stay as they are
  }
}

startView('tasks', {
  onInput(args) {
    if (typeof args.roomId === 'string') roomId = args.roomId;
  },
  onResult(result: ToolResult, ctx) {
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    namesOf(result, names);
    tasks = (result.structuredContent as { data: Task[] }).data;
    roomId ??= tasks[0]?.roomId ?? null;
    render(ctx);
    later(loadMembers(ctx));
  },
});
