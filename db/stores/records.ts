import type { DataSource, EntityManager } from 'typeorm';
import { MeetingRecord, type ApprovalState } from '../entities/index.js';
import { sql } from '../sql.js';
import { namedByPrefix } from './columns.js';
import { keysetEntities, type KeysetBounds } from './paging.js';

/**
 * Meeting records: read and written through TypeORM's entity (its columns are the list), off the hot paths; the
 * completion of a record id by title is one prepared statement.
 */
export async function recordsPage(m: EntityManager, roomId: string, bounds: KeysetBounds): Promise<MeetingRecord[]> {
  const qb = m.getRepository(MeetingRecord).createQueryBuilder('x').where('x.roomId = :roomId', { roomId });
  return keysetEntities(qb, 'x.id', bounds);
}

export async function recordById(m: EntityManager, roomId: string, id: string): Promise<MeetingRecord | null> {
  return m.findOneBy(MeetingRecord, { id, roomId });
}

export async function insertRecord(m: EntityManager, record: MeetingRecord): Promise<MeetingRecord> {
  const row = m.create(MeetingRecord, record);
  await m.insert(MeetingRecord, row);
  return row;
}

/** Writes the record's fields as they are now. */
export async function saveRecord(m: EntityManager, record: MeetingRecord): Promise<void> {
  await m.save(MeetingRecord, record);
}

export async function setRecordApprovalState(
  m: EntityManager,
  id: string,
  approvalState: ApprovalState,
  updatedAt: string,
): Promise<void> {
  await m.update(MeetingRecord, { id }, { approvalState, updatedAt });
}

export async function deleteRecordRow(m: EntityManager, id: string): Promise<void> {
  await m.delete(MeetingRecord, { id });
}

/** The room's records whose title (case-insensitive) or id starts with `prefix`, by title, at most `limit`. */
export async function recordsByPrefix(
  m: EntityManager,
  roomId: string,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  return namedByPrefix(m, 'records', 'title', roomId, prefix, limit);
}

const RECORD_IN_ROOM = 'SELECT 1 FROM "records" WHERE "id" = ? AND "roomId" = ?';

export async function recordInRoom(db: DataSource | EntityManager, roomId: string, id: string): Promise<boolean> {
  return (await sql(db, RECORD_IN_ROOM, [id, roomId])).rows.length > 0;
}
