import type { EntityManager, DataSource } from 'typeorm';
import type { EventRow } from '../entities/index.js';
import { LIMIT_PARAM, sql } from '../sql.js';
import { placeholders, tableColumns } from './columns.js';
import { keysetRows, type KeysetBounds } from './paging.js';
import { inRoomScope, type RoomScope } from './rooms.js';

/**
 * The event log. Every write of the API inserts one row and every event read (the log, a stream, the subscription
 * feed) pages it: prepared SQL throughout, one column list for the insert.
 */
export const EVENTS = tableColumns<EventRow>('events', [
  'seq',
  'id',
  'type',
  'organizationId',
  'ownerUserId',
  'roomId',
  'objectType',
  'objectId',
  'actor',
  'userId',
  'createdAt',
]);

/** What the event log reads of an event (the view is built from these). */
export type LoggedEvent = Pick<
  EventRow,
  'seq' | 'id' | 'type' | 'organizationId' | 'roomId' | 'objectType' | 'objectId' | 'actor' | 'createdAt'
>;

const LOGGED_COLUMNS =
  'e."seq", e."id", e."type", e."organizationId", e."roomId", e."objectType", e."objectId", e."actor", e."createdAt"';

/**
 * Inserts an event row in the caller's transaction as one prepared statement, the same row the ORM's insert
 * builder wrote: every write of the API emits one event, and the builder cost more than the insert.
 */
export async function insertEvent(m: EntityManager, e: EventRow): Promise<void> {
  await sql(m, EVENTS.insert, EVENTS.values(e));
}

/** Which events of the log a read asks for, besides the rooms of its scope. */
export interface EventFilter {
  type?: string;
  roomId?: string;
  /** Created at or after (fixed-width ISO 8601 text, so it compares as time). */
  since?: string;
}

/**
 * The condition of an event read: the rooms of the scope, and the scope's organization repeated on the event
 * (an event carries its room's organization) so that it is read through the (organizationId, seq) index in order.
 */
function eventConditions(scope: RoomScope, f: EventFilter): { conditions: string[]; params: unknown[] } {
  const rooms = inRoomScope(scope, 'e."roomId"');
  const conditions = [rooms.where];
  const params = [...rooms.params];
  const and = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (scope.organizationId) and('e."organizationId" = ?', scope.organizationId);
  else and('e."organizationId" IS NULL');
  if (f.type) and('e."type" = ?', f.type);
  if (f.roomId) and('e."roomId" = ?', f.roomId);
  if (f.since) and('e."createdAt" >= ?', f.since);
  return { conditions, params };
}

/**
 * A page of the events of the scope, in `seq` order. One statement, not the ORM's joins: SQLite compiled a join
 * with bound parameters again on every run.
 */
export async function eventsPage(
  m: EntityManager,
  scope: RoomScope,
  f: EventFilter,
  bounds: KeysetBounds,
): Promise<LoggedEvent[]> {
  const { conditions, params } = eventConditions(scope, f);
  return keysetRows<LoggedEvent>(
    m,
    { select: `SELECT ${LOGGED_COLUMNS} FROM "events" e WHERE ${conditions.join(' AND ')}`, params, key: 'e."seq"' },
    bounds,
  );
}

/** Events of the scope with `seq` after `afterSeq` (and among `seqs` when given), oldest first, at most `limit`. */
export async function eventsAfter(
  m: EntityManager,
  scope: RoomScope,
  q: { afterSeq: string; seqs?: string[]; roomId?: string; type?: string; limit: number },
): Promise<LoggedEvent[]> {
  const rooms = inRoomScope(scope, 'e."roomId"');
  const conditions = [rooms.where, 'e."seq" > ?'];
  const params: unknown[] = [...rooms.params, q.afterSeq];
  const rest = eventConditions(scope, { type: q.type, roomId: q.roomId });
  conditions.push(...rest.conditions.slice(1));
  params.push(...rest.params.slice(rooms.params.length));
  if (q.seqs) {
    if (!q.seqs.length) return [];
    conditions.push(`e."seq" IN (${placeholders(q.seqs)})`);
    params.push(...q.seqs);
  }
  params.push(q.limit);
  const rows = await sql<LoggedEvent>(
    m,
    `SELECT ${LOGGED_COLUMNS} FROM "events" e WHERE ${conditions.join(' AND ')} ORDER BY e."seq" ${LIMIT_PARAM}`,
    params,
  );
  return rows.rows;
}

/** The event of this public id among those of the scope, or null. */
export async function eventById(m: EntityManager, scope: RoomScope, id: string): Promise<LoggedEvent | null> {
  const { conditions, params } = eventConditions(scope, {});
  const rows = await sql<LoggedEvent>(
    m,
    `SELECT ${LOGGED_COLUMNS} FROM "events" e WHERE ${conditions.join(' AND ')} AND e."id" = ?`,
    [...params, id],
  );
  return rows.rows[0] ?? null;
}

/** What a subscription stream needs of a committed event. */
export interface FeedEvent {
  seq: string;
  type: string;
  roomId: string;
  objectId: string;
}

const READ_FEED = `SELECT e."seq", e."type", e."roomId", e."objectId" FROM "events" e WHERE e."seq" > ? ORDER BY e."seq" ${LIMIT_PARAM}`;

/** Every committed event with `seq` after `afterSeq`, oldest first, at most `limit` (any room, any caller). */
export async function feedEventsAfter(ds: DataSource, afterSeq: string, limit: number): Promise<FeedEvent[]> {
  return (await sql<FeedEvent>(ds, READ_FEED, [afterSeq, limit])).rows;
}
