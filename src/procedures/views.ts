import { Ajv } from 'ajv';
import { z } from 'zod';
import type { Approval, MeetingRecord, Message, Room, RoomMember, StoredFile, Task } from '../../db/entities/index.js';
import { servableMediaType } from '../domain/mediaType.js';
import { idOf, listOf, timestamp } from './schemas.js';

// The public shapes of the resources, and the one mapping from each entity to it.

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false, unicodeRegExp: false });

/**
 * `listOf(item)` for a list operation's `.output()`, with a cheaper output check on the hot path: the
 * validator Ajv compiles (once, at start) from the list's own JSON Schema (`z.toJSONSchema`, the output
 * side: the shapes the OpenAPI document and the MCP tools publish). zod's `parse` of a page of 50 cost about as
 * much as serializing it (it rebuilds every object); a value the compiled check accepts is exactly what zod
 * would return (the views build their objects with the schema's keys in its order, and the JSON Schema refuses
 * any other key), so it is returned as it is. Anything it refuses goes to zod's own `parse`, so a failure is
 * zod's error as before (tRPC answers it "Output validation failed", a 500), and whatever zod would accept
 * still comes out as zod makes it. The schema object itself is unchanged for OpenAPI and MCP.
 * test/procedures/outputCheck.test.ts holds the two checks to agreement.
 */
export function checkedListOf<T extends z.ZodType>(item: T) {
  const schema = listOf(item);
  const validate = ajv.compile(z.toJSONSchema(schema, { io: 'output', target: 'draft-7', unrepresentable: 'throw' }));
  const zodParse = schema.parse.bind(schema);
  Object.defineProperty(schema, 'parse', {
    value: (value: unknown, params?: Parameters<typeof zodParse>[1]) =>
      validate(value) ? (value as z.infer<typeof schema>) : zodParse(value, params),
    enumerable: false,
    configurable: true,
    writable: true,
  });
  Object.defineProperty(schema, COMPILED_CHECK, { value: validate, enumerable: false });
  return schema;
}

/** Where `checkedListOf` keeps the compiled check on its schema (for the test that compares it with zod). */
export const COMPILED_CHECK = Symbol.for('svc.compiledOutputCheck');

export const RoomView = z
  .object({
    id: idOf('room'),
    name: z.string(),
    roomType: z.literal(0).meta({ description: '0: ordinary room (direct messages are never shown)' }),
    organizationId: idOf('org').nullable(),
    createdById: idOf('usr'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Room' });
export const toRoom = (r: Room): z.infer<typeof RoomView> => ({
  id: r.id,
  name: r.name,
  roomType: 0,
  organizationId: r.organizationId,
  createdById: r.createdById,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const MemberView = z
  .object({ roomId: idOf('room'), userId: idOf('usr'), addedAt: timestamp })
  .meta({ id: 'RoomMember' });
export const toMember = (m: RoomMember): z.infer<typeof MemberView> => ({
  roomId: m.roomId,
  userId: m.userId,
  addedAt: m.createdAt,
});

export const MessageView = z
  .object({
    id: idOf('msg'),
    roomId: idOf('room'),
    authorId: idOf('usr'),
    postedBy: z.enum(['user', 'app', 'agent']).meta({ description: 'Actor that posted it for the author' }),
    body: z.string(),
    createdAt: timestamp,
    agentRunId: idOf('run').nullable().meta({ description: 'The agent run that posted it; null when none did' }),
  })
  .meta({ id: 'Message' });
export const toMessage = (m: Message): z.infer<typeof MessageView> => ({
  id: m.id,
  roomId: m.roomId,
  authorId: m.authorId,
  postedBy: m.postedBy as 'user',
  body: m.body,
  createdAt: m.createdAt,
  agentRunId: m.agentRunId ?? null,
});

export const TaskStatus = z.enum(['todo', 'in_progress', 'done']);
export const TaskView = z
  .object({
    id: idOf('task'),
    roomId: idOf('room'),
    title: z.string(),
    description: z.string(),
    status: TaskStatus,
    assigneeId: idOf('usr').nullable(),
    startDate: z.string().nullable(),
    dueDate: z.string().nullable(),
    createdById: idOf('usr'),
    createdAt: timestamp,
    updatedAt: timestamp,
    agentRunId: idOf('run').nullable().meta({ description: 'The agent run that created it; null when none did' }),
  })
  .meta({ id: 'Task' });
export const toTask = (t: Task): z.infer<typeof TaskView> => ({
  id: t.id,
  roomId: t.roomId,
  title: t.title,
  description: t.description,
  status: t.status,
  assigneeId: t.assigneeId,
  startDate: t.startDate,
  dueDate: t.dueDate,
  createdById: t.createdById,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  agentRunId: t.agentRunId ?? null,
});

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

export const FileView = z
  .object({
    id: idOf('file'),
    roomId: idOf('room'),
    messageId: idOf('msg').nullable(),
    taskId: idOf('task').nullable(),
    filename: z.string(),
    contentType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    uploadedById: idOf('usr'),
    createdAt: timestamp,
  })
  .meta({ id: 'FileMetadata' });
/** (the content type as a download serves it: a stored one that is not a strict media type reads as octet-stream) */
export const toFile = (f: StoredFile): z.infer<typeof FileView> => ({
  id: f.id,
  roomId: f.roomId,
  messageId: f.messageId,
  taskId: f.taskId,
  filename: f.filename,
  contentType: servableMediaType(f.contentType),
  size: f.size,
  sha256: f.sha256,
  uploadedById: f.uploadedById,
  createdAt: f.createdAt,
});
