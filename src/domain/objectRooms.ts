import type { EntityManager } from 'typeorm';
import { requireRoom, roomHolds } from './access.js';
import type { Actor } from './actor.js';

export { readableRoomIds } from './access.js';

/** The objects a resource URI can name below its room. */
export type RoomObjectKind = 'record' | 'file';

/**
 * Whether the actor may read the room and, when one is named, the object (a record or a file) lies in it: what a
 * resource URI below a room needs before it is subscribed to. A room the actor cannot read and an object of
 * another room both answer false, as if they did not exist.
 */
export async function readableInRoom(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  object?: { kind: RoomObjectKind; id: string },
): Promise<boolean> {
  try {
    await requireRoom(m, actor, roomId, 'read');
  } catch {
    return false;
  }
  return !object || roomHolds(m, roomId, object.kind, object.id);
}
