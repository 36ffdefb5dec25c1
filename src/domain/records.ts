import type { EntityManager } from 'typeorm';
import type { MeetingRecord } from '../../db/entities/index.js';
import { deleteApprovalsOf, withdrawPendingApproval } from '../../db/stores/approvals.js';
import { deleteRecordRow, insertRecord, recordById, recordsPage, saveRecord } from '../../db/stores/records.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { notFound, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';

export type { MeetingRecord } from '../../db/entities/index.js';
import { iso } from './time.js';

export async function listRecords(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  return readPage<MeetingRecord>(
    page,
    secret,
    (r) => r.id,
    (bounds) => recordsPage(m, roomId, bounds),
  );
}

export async function getRecord(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  recordId: string,
  need: 'read' | 'write' = 'read',
) {
  const room = await requireRoom(m, actor, roomId, need);
  const record = await recordById(m, roomId, recordId);
  if (!record) throw notFound('Record');
  return { room, record };
}

export async function createRecord(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  f: { title: string; body?: string },
) {
  const room = await requireRoom(m, actor, roomId, 'write');
  if (!f.title.trim()) throw validationError('Title must not be empty', { field: 'title' });
  const record = await insertRecord(m, {
    id: newId('rec', now.getTime()),
    roomId,
    title: f.title,
    body: f.body ?? '',
    approvalState: 'none',
    createdById: actor.userId,
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  await emitEvent(m, { type: 'record.created', room, object: { type: 'record', id: record.id }, actor, now });
  return record;
}

/**
 * Updates title or body. A record awaiting or holding approval goes back to `none` when its content changes:
 * what was approved is no longer what is written.
 */
export async function updateRecord(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  recordId: string,
  f: { title?: string; body?: string },
) {
  const { room, record } = await getRecord(m, actor, roomId, recordId, 'write');
  if (f.title !== undefined && !f.title.trim()) throw validationError('Title must not be empty', { field: 'title' });
  const changed =
    (f.title !== undefined && f.title !== record.title) || (f.body !== undefined && f.body !== record.body);
  if (f.title !== undefined) record.title = f.title;
  if (f.body !== undefined) record.body = f.body;
  if (changed && record.approvalState !== 'none') {
    if (record.approvalState === 'pending') {
      await withdrawPendingApproval(m, recordId, actor.userId, iso(now));
    }
    record.approvalState = 'none';
  }
  record.updatedAt = iso(now);
  await saveRecord(m, record);
  await emitEvent(m, { type: 'record.updated', room, object: { type: 'record', id: record.id }, actor, now });
  return record;
}

export async function deleteRecord(m: EntityManager, now: Date, actor: Actor, roomId: string, recordId: string) {
  const { room, record } = await getRecord(m, actor, roomId, recordId, 'write');
  await deleteApprovalsOf(m, record.id);
  await deleteRecordRow(m, record.id);
  await emitEvent(m, { type: 'record.deleted', room, object: { type: 'record', id: record.id }, actor, now });
  return record;
}
