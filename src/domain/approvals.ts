import type { EntityManager } from 'typeorm';
import type { Approval } from '../../db/entities/index.js';
import { approvalsPage, insertApproval, pendingApproval, saveApproval } from '../../db/stores/approvals.js';
import { setRecordApprovalState } from '../../db/stores/records.js';
import type { Actor } from './actor.js';
import { DomainError } from './errors.js';
import { emitEvent, type EventType } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';
import { getRecord } from './records.js';
import { iso } from './time.js';

export type { Approval } from '../../db/entities/index.js';

/**
 * The approval flow of a record. Who may do each step:
 * - `request`: any room member, when the record is not already pending; the requester is recorded;
 * - `approve` / `reject`: a room member other than the requester (nobody approves their own request);
 * - `withdraw`: the requester only, while pending.
 * States: none → pending → approved | rejected | withdrawn; from approved, rejected or withdrawn a new
 * request starts again. Changing a record's content resets its state to none (see updateRecord).
 */
export type ApprovalAction = 'request' | 'approve' | 'reject' | 'withdraw';

const EVENTS: Record<ApprovalAction, EventType[]> = {
  request: ['approval.requested', 'record.approval_requested'],
  approve: ['approval.approved', 'record.approved'],
  reject: ['approval.rejected'],
  withdraw: ['approval.withdrawn'],
};

export async function actOnApproval(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  recordId: string,
  action: ApprovalAction,
  comment?: string,
) {
  const { room, record } = await getRecord(m, actor, roomId, recordId, 'write');
  const pending = await pendingApproval(m, recordId);
  const conflict = (msg: string) =>
    new DomainError('invalid_state', msg, { details: { approvalState: record.approvalState } });
  let approval: Approval;
  if (action === 'request') {
    if (pending) throw conflict('An approval is already pending for this record');
    approval = await insertApproval(m, {
      id: newId('apr', now.getTime()),
      recordId,
      roomId,
      status: 'pending',
      requestedById: actor.userId,
      decidedById: null,
      comment: comment ?? null,
      createdAt: iso(now),
      decidedAt: null,
    });
    record.approvalState = 'pending';
  } else {
    if (!pending) throw conflict('No approval is pending for this record');
    if (action === 'withdraw' && pending.requestedById !== actor.userId) {
      throw new DomainError('forbidden', 'Only the requester can withdraw an approval request');
    }
    if (action !== 'withdraw' && pending.requestedById === actor.userId) {
      throw new DomainError('forbidden', 'The requester cannot decide their own approval request');
    }
    const status = action === 'approve' ? 'approved' : action === 'reject' ? 'rejected' : 'withdrawn';
    Object.assign(pending, {
      status,
      decidedById: actor.userId,
      decidedAt: iso(now),
      comment: comment ?? pending.comment,
    });
    await saveApproval(m, pending);
    approval = pending;
    record.approvalState = status;
  }
  record.updatedAt = iso(now);
  await setRecordApprovalState(m, record.id, record.approvalState, record.updatedAt);
  for (const type of EVENTS[action]) {
    await emitEvent(m, { type, room, object: { type: 'record', id: record.id }, actor, now });
  }
  return { record, approval };
}

/**
 * The approval history of a record, oldest first: every request and its decision (approved, rejected, withdrawn)
 * or its pending state, with who asked, who decided and the comment. Read under the record's own rights.
 */
export async function listApprovals(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  recordId: string,
  page: PageInput,
  secret: string,
) {
  await getRecord(m, actor, roomId, recordId);
  return readPage<Approval>(
    page,
    secret,
    (r) => r.id,
    (bounds) => approvalsPage(m, recordId, bounds),
  );
}
