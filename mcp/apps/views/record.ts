// The meeting record view (get_record): the record, its approval state and the decisions taken here; an
// approver approves or rejects with a comment through approve_record / reject_record, called through the host
// like any tool call of the model (same token, scopes, read-only mode and confirmation).
import { el, errorOf, later, nameOf, namesOf, show, startView, when, type ToolResult, type ViewContext } from './ui.js';

interface Rec {
  id: string;
  roomId: string;
  title: string;
  body: string;
  approvalState: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
}
interface Approval {
  id: string;
  status: string;
  requestedById: string;
  decidedById: string | null;
  comment: string | null;
  createdAt: string;
  decidedAt: string | null;
}

const root = document.getElementById('app')!;
const names = new Map<string, string>();
const decisions: Approval[] = [];
let record: Rec | null = null;
let busy = false;

function render(ctx: ViewContext): void {
  if (!record) return show(root, el('p', { class: 'muted' }, 'Waiting for the record…'));
  const r = record;
  const comment = el('textarea', { id: 'comment', rows: '2', maxlength: '2000', placeholder: 'Comment (optional)' });
  const act = (tool: string, label: string, cls: string) => {
    const b = el('button', { type: 'button', class: cls, 'data-action': tool }, label);
    if (busy) b.setAttribute('disabled', '');
    b.addEventListener('click', () => later(decide(ctx, tool, (comment as HTMLTextAreaElement).value)));
    return b;
  };
  show(
    root,
    el('h1', { id: 'title' }, r.title),
    el(
      'p',
      { class: 'meta' },
      el('span', { class: `badge state-${r.approvalState}`, id: 'state' }, r.approvalState),
      ` · by ${nameOf(names, r.createdById)} · updated ${when(r.updatedAt)}`,
    ),
    el('pre', { id: 'body', class: 'body' }, r.body),
    el(
      'section',
      { class: 'approval' },
      el('h2', {}, 'Approval'),
      r.approvalState === 'pending'
        ? el(
            'div',
            { class: 'decide' },
            comment,
            el(
              'div',
              { class: 'row' },
              act('approve_record', 'Approve', 'primary'),
              act('reject_record', 'Reject', 'danger'),
            ),
          )
        : el(
            'div',
            { class: 'row' },
            r.approvalState === 'approved' ? null : act('request_record_approval', 'Request approval', ''),
          ),
      decisions.length
        ? el(
            'ul',
            { id: 'decisions', class: 'list' },
            ...decisions.map((a) =>
              el(
                'li',
                { 'data-status': a.status },
                el('strong', {}, a.status),
                ` by ${nameOf(names, a.decidedById ?? a.requestedById)} · ${when(a.decidedAt ?? a.createdAt)}`,
                a.comment ? el('q', {}, a.comment) : null,
              ),
            ),
          )
        : null,
    ),
  );
}

async function decide(ctx: ViewContext, tool: string, comment: string): Promise<void> {
  if (!record || busy) return;
  busy = true;
  ctx.status('Sending…');
  render(ctx);
  try {
    const args: Record<string, unknown> = { roomId: record.roomId, recordId: record.id };
    if (comment.trim()) args.comment = comment.trim();
    const result = await ctx.call(tool, args);
    const error = errorOf(result);
    if (error) ctx.status(error, 'error');
    else {
      const out = result.structuredContent as { record: Rec; approval: Approval };
      namesOf(result, names);
      record = out.record;
      decisions.unshift(out.approval);
      ctx.status(`Recorded: ${out.approval.status}`, 'ok');
    }
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  } finally {
    busy = false;
    render(ctx);
  }
}

startView('record', {
  onResult(result: ToolResult, ctx) {
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    namesOf(result, names);
    record = result.structuredContent as unknown as Rec;
    render(ctx);
  },
});
