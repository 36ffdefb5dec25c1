import type { EntityManager } from 'typeorm';
import type { EventRow } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { keysetRows, type PageInput } from './paging.js';
import { inReadableRooms } from './access.js';

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
