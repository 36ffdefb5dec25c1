import type { DataSource, EntityManager } from 'typeorm';
import type { EventRow, Room } from '../../db/entities/index.js';
import { insertEvent } from '../../db/stores/events.js';
import type { Actor } from './actor.js';
import type { EventType, ObjectTypeOf } from './catalog.js';
import { newEventId, newId } from './ids.js';
import { iso } from './time.js';

export type { EventType, ObjectType } from './catalog.js';

export interface EmitEventOptions<T extends EventType = EventType> {
  /** A catalog type (src/domain/catalog.ts): anything else, a misspelling included, fails to compile. */
  type: T;
  room: Room;
  /** The object the event is about; its type is the one the catalog gives the event type. */
  object: { type: ObjectTypeOf<T>; id: string };
  actor: Actor;
  now: Date;
}

/** An observer of a new event inside its transaction (the webhook outbox fans out here), given the event's room too. */
export type EventObserver = (m: EntityManager, event: EventRow, room: Room) => Promise<void>;

/** The observers of one runtime's events (`Services.events`); two runtimes in one process never share them. */
export class EventObservers {
  readonly #observers: EventObserver[] = [];

  /** Adds an observer (once: adding the same one again changes nothing). */
  on(o: EventObserver): void {
    if (!this.#observers.includes(o)) this.#observers.push(o);
  }

  /** Runs every observer, in order, in the event's transaction: a throw rolls the write back with it. */
  async notify(m: EntityManager, event: EventRow, room: Room): Promise<void> {
    for (const observe of this.#observers) await observe(m, event, room);
  }
}

/**
 * Which runtime's observers hear an event of a transaction: the domain's writes get only an EntityManager,
 * whose DataSource belongs to exactly one runtime (openRuntime binds them). Keyed weakly: a closed runtime's
 * entry goes with its DataSource.
 */
const boundObservers = new WeakMap<DataSource, EventObservers>();

/** Makes `observers` hear every event written through `ds` (openRuntime, once per runtime). */
export function bindEventObservers(ds: DataSource, observers: EventObservers): void {
  boundObservers.set(ds, observers);
}

/**
 * Appends an event to the event log in the caller's transaction (the transactional outbox): the change and
 * its event commit together or not at all.
 */
export async function emitEvent<T extends EventType>(m: EntityManager, o: EmitEventOptions<T>): Promise<EventRow> {
  const row: EventRow = {
    seq: newId('seq', o.now.getTime()),
    id: newEventId(),
    type: o.type,
    organizationId: o.room.organizationId,
    ownerUserId: o.room.organizationId ? null : o.room.createdById,
    roomId: o.room.id,
    objectType: o.object.type,
    objectId: o.object.id,
    actor: o.actor.kind,
    userId: o.actor.userId,
    createdAt: iso(o.now),
  };
  await insertEvent(m, row);
  await boundObservers.get(m.connection)?.notify(m, row, o.room);
  return row;
}
