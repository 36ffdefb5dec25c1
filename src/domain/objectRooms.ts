import type { EntityManager } from 'typeorm';
import { objectInRoom, roomIdsWhere, type RoomObjectKind } from '../../db/stores/objectRooms.js';
import { readableRoomsWhere, requireRoom } from './access.js';
import type { Actor } from './actor.js';

export type { RoomObjectKind };

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
  return !object || objectInRoom(m, object.kind, roomId, object.id);
}

/** The ids of the rooms the actor can read, in order (`readableRoomsWhere`): what `resources/list` lists. */
export async function readableRoomIds(m: EntityManager, actor: Actor): Promise<string[]> {
  const rooms = await readableRoomsWhere(m, actor);
  return roomIdsWhere(m, rooms.where, rooms.params);
}
