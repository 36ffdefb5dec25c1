// The meeting record view (get_record): the record, its approval state, and its approvers and their decisions
// (list_record_approvals, an app-only tool); an approver approves or rejects with a comment through
// approve_record / reject_record, called through the host like any tool call of the model (same token, scopes,
// read-only mode and confirmation), and the view reads the history again once the decision is recorded.
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
/** The record's approval history (list_record_approvals), oldest first; null until read, or when it cannot be. */
let history: Approval[] | null = null;
/** Why the history could not be read (a connection without the tool or its scope), shown once. */
let historyError: string | null = null;
/** The decisions taken in this view, shown when the history cannot be read. */
const taken: Approval[] = [];
let record: Rec | null = null;
let busy = false;

/** The most history pages the view reads (200 requests each): a record is asked for approval a few times. */
const HISTORY_PAGES = 5;

const LABELS: Record<string, string> = {
  pending: 'Pending',
  approved: 'Approved',
  rejected: 'Rejected',
  withdrawn: 'Withdrawn',
};

/** One approval request: its decision, who took it and when, who asked and when, and the comment. */
function approvalItem(a: Approval): HTMLElement {
  const decided = a.decidedById !== null;
  return el(
    'li',
    { 'data-approval': a.id, 'data-status': a.status },
    el('span', { class: `badge state-${a.status}` }, LABELS[a.status] ?? a.status),
    decided
      ? el('span', { class: 'decider' }, ` by ${nameOf(names, a.decidedById)} · ${when(a.decidedAt)}`)
      : el('span', { class: 'decider muted' }, ' awaiting a decision'),
    el('div', { class: 'meta' }, `requested by ${nameOf(names, a.requestedById)} · ${when(a.createdAt)}`),
    a.comment ? el('q', { class: 'comment' }, a.comment) : null,
  );
}

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
  // newest first: the request that decides the record's state on top
  const shown = [...(history ?? taken)].reverse();
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
      el('h2', {}, 'Approvers and decisions'),
      shown.length
        ? el('ul', { id: 'decisions', class: 'list' }, ...shown.map(approvalItem))
        : el('p', { id: 'no-decisions', class: 'muted' }, history ? 'Never sent for approval.' : 'Reading…'),
      historyError ? el('p', { id: 'history-error', class: 'muted' }, `History unavailable: ${historyError}`) : null,
    ),
  );
}

/** Reads the record's whole approval history through the host (list_record_approvals, app-only). */
async function loadHistory(ctx: ViewContext): Promise<void> {
  if (!record) return;
  const { roomId, id: recordId } = record;
  const rows: Approval[] = [];
  let cursor: string | null = null;
  try {
    for (let page = 0; page < HISTORY_PAGES; page++) {
      const result = await ctx.call('list_record_approvals', {
        roomId,
        recordId,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      const error = errorOf(result);
      if (error) throw new Error(error);
      namesOf(result, names);
      const out = result.structuredContent as { data: Approval[]; nextCursor: string | null };
      rows.push(...out.data);
      cursor = out.nextCursor;
      if (!cursor) break;
    }
    history = rows;
    historyError = null;
  } catch (err) {
    // a connection without the tool (toolsets, scopes, a host that forwards listed tools only): the decisions
    // taken here are shown instead
    historyError = err instanceof Error ? err.message : String(err);
  }
  render(ctx);
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
      taken.push(out.approval);
      if (history) history = [...history.filter((a) => a.id !== out.approval.id), out.approval];
      ctx.status(`Recorded: ${out.approval.status}`, 'ok');
    }
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  } finally {
    busy = false;
    render(ctx);
  }
  // the history as svc holds it now (another approver may have acted meanwhile)
  await loadHistory(ctx);
}

startView('record', {
  onResult(result: ToolResult, ctx) {
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    namesOf(result, names);
    record = result.structuredContent as unknown as Rec;
    render(ctx);
    later(loadHistory(ctx));
  },
});
