import type { EntityManager } from 'typeorm';
import type { EventRow } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';

const EVENT_INSERT =
  'INSERT INTO "events" ("seq", "id", "type", "organizationId", "ownerUserId", "roomId", "objectType", "objectId", "actor", "userId", "createdAt") ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Inserts an event row in the caller's transaction as one prepared statement (db/sql.ts), the same row the
 * ORM's insert builder wrote: every write of the API emits one event, and the builder cost more than the insert.
 */
export async function insertEventRow(m: EntityManager, e: EventRow): Promise<void> {
  await sql(m, EVENT_INSERT, [
    e.seq,
    e.id,
    e.type,
    e.organizationId,
    e.ownerUserId,
    e.roomId,
    e.objectType,
    e.objectId,
    e.actor,
    e.userId,
    e.createdAt,
  ]);
}
