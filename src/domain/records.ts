import type { EntityManager } from 'typeorm';
import { Approval, MeetingRecord } from '../../db/entities/index.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { notFound, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { keysetPage, type PageInput } from './paging.js';
import { iso } from './time.js';

export async function listRecords(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  const qb = m.getRepository(MeetingRecord).createQueryBuilder('x').where('x.roomId = :roomId', { roomId });
  return keysetPage(qb, 'x.id', (r) => r.id, page, secret);
}

export async function getRecord(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  recordId: string,
  need: 'read' | 'write' = 'read',
) {
  const room = await requireRoom(m, actor, roomId, need);
  const record = await m.findOneBy(MeetingRecord, { id: recordId, roomId });
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
  const record = m.create(MeetingRecord, {
    id: newId('rec', now.getTime()),
    roomId,
    title: f.title,
    body: f.body ?? '',
    approvalState: 'none',
    createdById: actor.userId,
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  await m.insert(MeetingRecord, record);
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
      await m.update(
        Approval,
        { recordId, status: 'pending' },
        { status: 'withdrawn', decidedById: actor.userId, decidedAt: iso(now) },
      );
    }
    record.approvalState = 'none';
  }
  record.updatedAt = iso(now);
  await m.save(MeetingRecord, record);
  await emitEvent(m, { type: 'record.updated', room, object: { type: 'record', id: record.id }, actor, now });
  return record;
}

export async function deleteRecord(m: EntityManager, now: Date, actor: Actor, roomId: string, recordId: string) {
  const { room, record } = await getRecord(m, actor, roomId, recordId, 'write');
  await m.delete(Approval, { recordId: record.id });
  await m.delete(MeetingRecord, { id: record.id });
  await emitEvent(m, { type: 'record.deleted', room, object: { type: 'record', id: record.id }, actor, now });
  return record;
}
