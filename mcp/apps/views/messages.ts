// The conversation view (list_messages): the latest messages of a room with their authors, following new ones
// by calling list_messages through the host every few seconds (`since` the newest message shown), and a box to
// post one with create_message.
import { el, errorOf, later, nameOf, namesOf, show, startView, when, type ToolResult, type ViewContext } from './ui.js';

interface Message {
  id: string;
  roomId: string;
  authorId: string;
  postedBy: string;
  body: string;
  createdAt: string;
}

/** How often the view asks for new messages. */
const POLL_MS = 2000;
const SHOWN = 50;

const root = document.getElementById('app')!;
const names = new Map<string, string>();
const byId = new Map<string, Message>();
let roomId: string | null = null;
let polling = false;

const ordered = () => [...byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1)).slice(-SHOWN);

function render(ctx: ViewContext): void {
  const input = el('textarea', { id: 'compose', rows: '2', maxlength: '10000', placeholder: 'Write a message' });
  const send = el('button', { type: 'button', class: 'primary' }, 'Send');
  send.addEventListener('click', () => later(post(ctx, input as HTMLTextAreaElement)));
  show(
    root,
    el(
      'ol',
      { id: 'messages', class: 'messages' },
      ...ordered().map((m) =>
        el(
          'li',
          { 'data-message': m.id },
          el(
            'div',
            { class: 'meta' },
            el('strong', { class: 'author' }, nameOf(names, m.authorId)),
            m.postedBy === 'user' ? null : el('span', { class: 'badge' }, m.postedBy),
            ` ${when(m.createdAt)}`,
          ),
          el('div', { class: 'body' }, m.body),
        ),
      ),
    ),
    el('div', { class: 'row compose' }, input, send),
  );
}

function add(result: ToolResult): boolean {
  namesOf(result, names);
  let added = false;
  for (const m of (result.structuredContent as { data: Message[] }).data) {
    if (!byId.has(m.id)) added = true;
    byId.set(m.id, m);
    roomId ??= m.roomId;
  }
  return added;
}

async function poll(ctx: ViewContext): Promise<void> {
  if (!roomId || polling) return;
  polling = true;
  try {
    const newest = ordered().at(-1)?.createdAt;
    const result = await ctx.call('list_messages', {
      roomId,
      ...(newest ? { since: newest } : { order: 'desc' }),
      limit: SHOWN,
    });
    const error = errorOf(result);
    if (error) ctx.status(error, 'error');
    else if (add(result)) render(ctx);
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  } finally {
    polling = false;
  }
}

async function post(ctx: ViewContext, input: HTMLTextAreaElement): Promise<void> {
  const body = input.value.trim();
  if (!roomId || !body) return;
  try {
    const result = await ctx.call('create_message', { roomId, body });
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    input.value = '';
    ctx.status('Sent', 'ok');
    await poll(ctx);
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  }
}

let timer: ReturnType<typeof setInterval> | undefined;
startView('messages', {
  onInput(args) {
    if (typeof args.roomId === 'string') roomId = args.roomId;
  },
  onResult(result: ToolResult, ctx) {
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    add(result);
    render(ctx);
    timer ??= setInterval(() => later(poll(ctx)), POLL_MS);
  },
});
