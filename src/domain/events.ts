import type { EntityManager } from 'typeorm';
import { EventRow, type Room } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { insertEventRow } from './eventRows.js';
import { newEventId, newId } from './ids.js';
import { iso } from './time.js';

export type ObjectType = 'record' | 'message' | 'task' | 'file' | 'room';

export interface EmitEventOptions {
  type: string;
  room: Room;
  object: { type: ObjectType; id: string };
  actor: Actor;
  now: Date;
}

/** Observers of a new event inside its transaction (the webhook outbox fans out here). */
export type EventObserver = (m: EntityManager, event: EventRow) => Promise<void>;
const observers: EventObserver[] = [];
export const onEvent = (o: EventObserver): void => {
  if (!observers.includes(o)) observers.push(o);
};

/**
 * Appends an event to the event log in the caller's transaction (the transactional outbox): the change and
 * its event commit together or not at all.
 */
export async function emitEvent(m: EntityManager, o: EmitEventOptions): Promise<EventRow> {
  const row = m.create(EventRow, {
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
  });
  await insertEventRow(m, row);
  for (const observe of observers) await observe(m, row);
  return row;
}
