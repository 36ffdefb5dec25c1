import type { DataSource, EntityManager } from 'typeorm';
import {
  eventById,
  eventsAfter,
  eventsPage,
  feedEventsAfter,
  type FeedEvent,
  type LoggedEvent,
} from '../../db/stores/events.js';
import type { Actor } from './actor.js';
import { readPage, type PageInput } from './paging.js';
import { readableRooms } from './access.js';

/** What the event log reads of an event (the view is built from these: procedures/events.ts). */
export type { FeedEvent, LoggedEvent } from '../../db/stores/events.js';

/**
 * The event log as the actor may read it: events of the ordinary rooms the actor can read (`readableRooms`:
 * organization owners/admins every room of their organization, others the rooms they belong to), in order.
 */
export async function listEvents(
  m: EntityManager,
  actor: Actor,
  page: PageInput & { type?: string; roomId?: string; since?: string },
  secret: string,
) {
  const scope = await readableRooms(m, actor);
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  const filter = { type: page.type, roomId: page.roomId, since: page.since };
  return readPage<LoggedEvent>(
    page,
    secret,
    (e) => e.seq,
    (bounds) => eventsPage(m, scope, filter, bounds),
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
  return eventsAfter(m, await readableRooms(m, actor), q);
}

/** The event of this public id among those the actor may read, or null. */
export async function readableEvent(m: EntityManager, actor: Actor, id: string): Promise<LoggedEvent | null> {
  return eventById(m, await readableRooms(m, actor), id);
}

/**
 * Every committed event with `seq` after `afterSeq`, oldest first, at most `limit`, of any room: what the one
 * poller of a process reads for the subscription streams (mcp/eventFeed.ts), which then keep to each caller's
 * rooms themselves. Outside any transaction, so only committed rows are seen.
 */
export async function committedEventsAfter(ds: DataSource, afterSeq: string, limit: number): Promise<FeedEvent[]> {
  return feedEventsAfter(ds, afterSeq, limit);
}
