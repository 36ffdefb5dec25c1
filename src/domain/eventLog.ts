import type { EntityManager } from 'typeorm';
import type { EventRow } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { keysetRows, type PageInput } from './paging.js';
import { inReadableRooms } from './access.js';
import { LIMIT_PARAM, sql } from '../../db/sql.js';

/** What the event log reads of an event (the view is built from these: procedures/events.ts). */
export type LoggedEvent = Pick<
  EventRow,
  'seq' | 'id' | 'type' | 'organizationId' | 'roomId' | 'objectType' | 'objectId' | 'actor' | 'createdAt'
>;

const EVENT_COLUMNS =
  'e."seq", e."id", e."type", e."organizationId", e."roomId", e."objectType", e."objectId", e."actor", e."createdAt"';

/**
 * The event log as the actor may read it: events of the ordinary rooms the actor can read (`readableRoomsWhere`:
 * organization owners/admins every room of their organization, others the rooms they belong to), in order.
 * One statement, not the ORM's joins: SQLite (3.54) compiled a join with bound parameters again on every run.
 * An event carries its room's organization (events.ts), so the organization's condition is repeated on the
 * event to read it through the (organizationId, seq) index in order.
 */
export async function listEvents(
  m: EntityManager,
  actor: Actor,
  page: PageInput & { type?: string; roomId?: string; since?: string },
  secret: string,
) {
  const rooms = await inReadableRooms(m, actor, 'e."roomId"');
  const conditions = [rooms.where];
  const params = [...rooms.params];
  const and = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (actor.organizationId) and('e."organizationId" = ?', actor.organizationId);
  else and('e."organizationId" IS NULL');
  if (page.type) and('e."type" = ?', page.type);
  if (page.roomId) and('e."roomId" = ?', page.roomId);
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  if (page.since) and('e."createdAt" >= ?', page.since);
  return keysetRows<LoggedEvent>(
    m,
    { select: `SELECT ${EVENT_COLUMNS} FROM "events" e WHERE ${conditions.join(' AND ')}`, params, key: 'e."seq"' },
    (e) => e.seq,
    page,
    secret,
  );
}

/**
 * Events the actor may read with `seq` after `afterSeq` (or among `seqs`), oldest first, at most `limit`: what an
 * event stream serves (`GET /v1/events/stream`), under the same rules as `listEvents`.
 */
export async function readableEventsAfter(
  m: EntityManager,
  actor: Actor,
  q: { afterSeq: string; seqs?: string[]; roomId?: string; type?: string; limit: number },
): Promise<LoggedEvent[]> {
  const rooms = await inReadableRooms(m, actor, 'e."roomId"');
  const conditions = [rooms.where, 'e."seq" > ?'];
  const params: unknown[] = [...rooms.params, q.afterSeq];
  if (actor.organizationId) {
    conditions.push('e."organizationId" = ?');
    params.push(actor.organizationId);
  } else conditions.push('e."organizationId" IS NULL');
  if (q.type) {
    conditions.push('e."type" = ?');
    params.push(q.type);
  }
  if (q.roomId) {
    conditions.push('e."roomId" = ?');
    params.push(q.roomId);
  }
  if (q.seqs) {
    if (!q.seqs.length) return [];
    conditions.push(`e."seq" IN (${q.seqs.map(() => '?').join(', ')})`);
    params.push(...q.seqs);
  }
  params.push(q.limit);
  const rows = await sql<LoggedEvent>(
    m,
    `SELECT ${EVENT_COLUMNS} FROM "events" e WHERE ${conditions.join(' AND ')} ORDER BY e."seq" ${LIMIT_PARAM}`,
    params,
  );
  return rows.rows;
}

/** The event of this public id among those the actor may read, or null. */
export async function readableEvent(m: EntityManager, actor: Actor, id: string): Promise<LoggedEvent | null> {
  const rooms = await inReadableRooms(m, actor, 'e."roomId"');
  const org = actor.organizationId ? 'e."organizationId" = ?' : 'e."organizationId" IS NULL';
  const rows = await sql<LoggedEvent>(
    m,
    `SELECT ${EVENT_COLUMNS} FROM "events" e WHERE ${rooms.where} AND ${org} AND e."id" = ?`,
    [...rooms.params, ...(actor.organizationId ? [actor.organizationId] : []), id],
  );
  return rows.rows[0] ?? null;
}
