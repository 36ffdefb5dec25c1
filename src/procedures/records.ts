import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import { actOnApproval, type ApprovalAction, listApprovals } from '../domain/approvals.js';
import { createRecord, deleteRecord, getRecord, listRecords, updateRecord } from '../domain/records.js';
import type { CatalogEntry, TriggerCall } from '../domain/catalogEntry.js';
import type { ConfirmTargetOf, ProcedureMeta } from './meta.js';
import { textArg, unlessNotFound } from './confirmTarget.js';
import { requireRoom } from '../domain/access.js';
import { forModel, idOf, listOf, pageInput, text, timestamp, trimmedName } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import type { Approval, MeetingRecord } from '../../db/entities/index.js';

// The public shapes of a record and an approval, and the one mapping from each entity to it.
export const ApprovalState = z.enum(['none', 'pending', 'approved', 'rejected', 'withdrawn']);
export const RecordView = z
  .object({
    id: idOf('rec'),
    roomId: idOf('room'),
    title: z.string(),
    body: z.string(),
    approvalState: ApprovalState,
    createdById: idOf('usr'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'MeetingRecord' });
export const toRecord = (r: MeetingRecord): z.infer<typeof RecordView> => ({
  id: r.id,
  roomId: r.roomId,
  title: r.title,
  body: r.body,
  approvalState: r.approvalState,
  createdById: r.createdById,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const ApprovalView = z
  .object({
    id: idOf('apr'),
    recordId: idOf('rec'),
    status: z.enum(['pending', 'approved', 'rejected', 'withdrawn']),
    requestedById: idOf('usr'),
    decidedById: idOf('usr').nullable(),
    comment: z.string().nullable(),
    createdAt: timestamp,
    decidedAt: timestamp.nullable(),
  })
  .meta({ id: 'Approval' });
export const toApproval = (a: Approval): z.infer<typeof ApprovalView> => ({
  id: a.id,
  recordId: a.recordId,
  status: a.status,
  requestedById: a.requestedById,
  decidedById: a.decidedById,
  comment: a.comment,
  createdAt: a.createdAt,
  decidedAt: a.decidedAt,
});

const title = forModel(
  trimmedName(500).meta({ description: 'Title (trimmed)', example: 'Weekly sync, 2026-11-20' }),
  null,
);
const body = text(200_000).meta({
  description: 'Markdown text of the minutes',
  example: '## Decisions\n- Ship on Monday',
});
const recordPath = '/v1/rooms/{roomId}/records/{recordId}';
/** What a person confirms before a record is deleted or decided on over MCP: its title and approval state. */
const recordTarget: ConfirmTargetOf = async (m, actor, a) => {
  await requireRoom(m, actor, textArg(a.roomId), 'read');
  const found = await unlessNotFound(getRecord(m, actor, textArg(a.roomId), textArg(a.recordId)));
  if (!found) return null;
  const r = found.record;
  return {
    id: r.id,
    version: `${r.updatedAt}|${r.approvalState}`,
    shown: `the record "${r.title}" (approval: ${r.approvalState}, last changed ${r.updatedAt})`,
  };
};

const recordErrors: ProcedureMeta['errors'] = ['not_found', 'room_not_found', 'forbidden'];

const approvalDocs: Record<ApprovalAction, { tool: string; title: string; description: string; forModel: string }> = {
  request: {
    tool: 'request_record_approval',
    title: 'Request approval of a record',
    description:
      'Any room member may request approval while none is pending. Fires approval.requested and record.approval_requested.',
    forModel: 'Requests approval of a record while none is pending.',
  },
  approve: {
    tool: 'approve_record',
    title: 'Approve a record',
    description:
      'A room member other than the requester approves the pending request. Fires approval.approved and record.approved.',
    forModel: "Approves a record's pending approval (not as its requester).",
  },
  reject: {
    tool: 'reject_record',
    title: 'Reject a record',
    description: 'A room member other than the requester rejects the pending request. Fires approval.rejected.',
    forModel: "Rejects a record's pending approval (not as its requester).",
  },
  withdraw: {
    tool: 'withdraw_record_approval',
    title: 'Withdraw an approval request',
    description: 'The requester withdraws their pending request. Fires approval.withdrawn.',
    forModel: 'Withdraws your own pending approval request.',
  },
};

const approvalProcedure = (action: ApprovalAction) =>
  apiProcedure
    .meta({
      http: { method: 'POST', path: `${recordPath}/approval/${action}` },
      tool: {
        name: approvalDocs[action].tool,
        title: approvalDocs[action].title,
        description: approvalDocs[action].forModel,
      },
      summary: approvalDocs[action].title,
      description: approvalDocs[action].description,
      // approving, rejecting or withdrawing decides a record's fate: a person confirms it over MCP
      // (mcp/tools/confirm.ts)
      tags: ['records'],
      scope: 'records:write',
      units: 2,
      kind: 'write',
      destructive: action !== 'request',
      confirmTarget: recordTarget,
      errors: [...recordErrors!, 'invalid_state'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        recordId: idOf('rec'),
        comment: text(2000).optional().meta({ description: 'Recorded with the approval step' }),
      }),
    )
    .output(z.object({ record: RecordView, approval: ApprovalView }))
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) => {
        const r = await actOnApproval(
          m,
          ctx.services.now(),
          ctx.actor,
          input.roomId,
          input.recordId,
          action,
          input.comment,
        );
        return { record: toRecord(r.record), approval: toApproval(r.approval) };
      });
    });

/** A record's approval history: who asked, who decided what, with which comment, when. */
const listApprovalsProcedure = apiProcedure
  .meta({
    http: { method: 'GET', path: `${recordPath}/approvals` },
    tool: {
      name: 'list_record_approvals',
      title: "List a record's approvals",
      description: "A record's approval requests and decisions, oldest first.",
    },
    summary: "List a record's approvals",
    description:
      'The approval requests of a record, oldest first: each with its requester, its state (pending, approved, ' +
      'rejected, withdrawn), who decided it, the comment and the times.',
    tags: ['records'],
    scope: 'records:read',
    units: 1,
    kind: 'read',
    errors: ['not_found', 'room_not_found'],
  })
  .input(z.strictObject({ roomId: idOf('room'), recordId: idOf('rec'), ...pageInput }))
  .output(listOf(ApprovalView))
  .query(async ({ ctx, input }) => {
    const { roomId, recordId, ...page } = input;
    const approvals = await listApprovals(
      ctx.services.ds.manager,
      ctx.actor,
      roomId,
      recordId,
      page,
      ctx.services.secret,
    );
    return { data: approvals.data.map(toApproval), nextCursor: approvals.nextCursor };
  });

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
// how `svc trigger` fires them: a record created, then the change
const newRecord = {
  method: 'POST',
  path: 'records',
  body: { title: 'svc trigger {now}', body: 'Created by svc trigger to fire a webhook event.' },
  saves: 'record',
} as const satisfies TriggerCall;
const approval = (step: string): TriggerCall => ({
  method: 'POST',
  path: `records/{record}/approval/${step}`,
  body: {},
});
const requested = { calls: [newRecord, approval('request')] };
const needsAnother = (doing: string, verb: string) => ({
  cannot: `${doing} needs a room member other than the requester; request with this key and ${verb} with another user's key`,
});

export const recordEvents = [
  {
    type: 'record.created',
    objectType: 'record',
    description: 'A record was created',
    stable: true,
    v1: true,
    trigger: { calls: [newRecord] },
  },
  {
    type: 'record.updated',
    objectType: 'record',
    description: 'A record was updated',
    stable: true,
    v1: true,
    trigger: {
      calls: [newRecord, { method: 'PATCH', path: 'records/{record}', body: { title: 'svc trigger (updated) {now}' } }],
    },
  },
  {
    type: 'record.deleted',
    objectType: 'record',
    description: 'A record was deleted',
    stable: true,
    v1: true,
    trigger: { calls: [newRecord, { method: 'DELETE', path: 'records/{record}' }] },
  },
  {
    type: 'approval.requested',
    objectType: 'record',
    description: 'Approval of a record was requested',
    stable: true,
    v1: true,
    trigger: requested,
  },
  {
    type: 'approval.approved',
    objectType: 'record',
    description: 'A record was approved',
    stable: true,
    v1: true,
    trigger: needsAnother('approving', 'approve'),
  },
  {
    type: 'approval.rejected',
    objectType: 'record',
    description: 'A record was rejected',
    stable: true,
    v1: true,
    trigger: needsAnother('rejecting', 'reject'),
  },
  {
    type: 'approval.withdrawn',
    objectType: 'record',
    description: 'An approval request was withdrawn',
    stable: true,
    v1: true,
    trigger: { calls: [...requested.calls, approval('withdraw')] },
  },
  {
    type: 'record.approval_requested',
    objectType: 'record',
    description: 'v2 alias of approval.requested; data.object is the record',
    stable: true,
    v1: false,
    trigger: requested,
  },
  {
    type: 'record.approved',
    objectType: 'record',
    description: 'v2 alias of approval.approved; data.object is the record',
    stable: true,
    v1: false,
    trigger: needsAnother('approving', 'approve'),
  },
] as const satisfies readonly CatalogEntry[];

export const recordsRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/records' },
      tool: {
        name: 'list_records',
        title: 'List records',
        description: 'Meeting records (minutes) of a room, oldest first, with their approval state.',
      },
      summary: 'List meeting records',
      description: 'Records (meeting minutes) of a room, oldest first.',
      tags: ['records'],
      scope: 'records:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(listOf(RecordView))
    .query(async ({ ctx, input }) => {
      const page = await listRecords(ctx.services.ds.manager, ctx.actor, input.roomId, input, ctx.services.secret);
      return { data: page.data.map(toRecord), nextCursor: page.nextCursor };
    }),

  create: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms/{roomId}/records', successStatus: 201 },
      tool: {
        name: 'create_record',
        title: 'Create a record',
        description: 'Creates a meeting record (markdown minutes) in a room.',
      },
      summary: 'Create a meeting record',
      description: 'Creates a record in a room. Fires record.created.',
      tags: ['records'],
      scope: 'records:write',
      units: 2,
      kind: 'write',
      errors: recordErrors,
    })
    .input(z.strictObject({ roomId: idOf('room'), title, body: body.optional() }))
    .output(RecordView)
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, async (m) =>
        toRecord(await createRecord(m, ctx.services.now(), ctx.actor, input.roomId, input)),
      ),
    ),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: recordPath },
      tool: { name: 'get_record', title: 'Get a record', description: 'One meeting record with its approval state.' },
      summary: 'Get a meeting record',
      description: 'One record with its approval state.',
      tags: ['records'],
      scope: 'records:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), recordId: idOf('rec') }))
    .output(RecordView)
    .query(async ({ ctx, input }) =>
      toRecord((await getRecord(ctx.services.ds.manager, ctx.actor, input.roomId, input.recordId)).record),
    ),

  update: apiProcedure
    .meta({
      http: { method: 'PATCH', path: recordPath },
      tool: {
        name: 'update_record',
        title: 'Update a record',
        description: "Changes a record's title or body; a content change resets its approval state.",
      },
      summary: 'Update a meeting record',
      description:
        'Changes title or body. A content change resets the approval state to none (a pending request is withdrawn). Fires record.updated.',
      tags: ['records'],
      scope: 'records:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: recordErrors,
    })
    .input(
      z.strictObject({ roomId: idOf('room'), recordId: idOf('rec'), title: title.optional(), body: body.optional() }),
    )
    .output(RecordView)
    .mutation(async ({ ctx, input }) => {
      const { roomId, recordId, ...f } = input;
      return inWriteTransaction(ctx, async (m) =>
        toRecord(await updateRecord(m, ctx.services.now(), ctx.actor, roomId, recordId, f)),
      );
    }),

  delete: apiProcedure
    .meta({
      http: { method: 'DELETE', path: recordPath },
      tool: {
        name: 'delete_record',
        title: 'Delete a record',
        description: 'Deletes a meeting record and its approvals.',
      },
      summary: 'Delete a meeting record',
      description: 'Deletes a record and its approvals. Fires record.deleted.',
      tags: ['records'],
      scope: 'records:write',
      units: 2,
      kind: 'write',
      destructive: true,
      confirmTarget: recordTarget,
      idempotent: true,
      errors: recordErrors,
    })
    .input(z.strictObject({ roomId: idOf('room'), recordId: idOf('rec') }))
    .output(z.object({ id: idOf('rec'), deleted: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) => {
        const r = await deleteRecord(m, ctx.services.now(), ctx.actor, input.roomId, input.recordId);
        return { id: r.id, deleted: true as const };
      });
    }),

  requestApproval: approvalProcedure('request'),
  approve: approvalProcedure('approve'),
  reject: approvalProcedure('reject'),
  withdrawApproval: approvalProcedure('withdraw'),
  listApprovals: listApprovalsProcedure,
});
