import type { DataSource, EntityManager } from 'typeorm';
import type { OrgRole, Room } from '../../db/entities/index.js';
import { orgRoleOf, roomWithAccessOf, userNamesSeenBy } from '../../db/stores/access.js';
import { fileInRoom, filesByPrefix } from '../../db/stores/files.js';
import { messageInRoom } from '../../db/stores/messages.js';
import { recordInRoom, recordsByPrefix } from '../../db/stores/records.js';
import { taskInRoom } from '../../db/stores/tasks.js';
import { roomIdsInScope, roomsByPrefix, type RoomScope } from '../../db/stores/rooms.js';
import type { Actor } from './actor.js';
import { DomainError, notFound, roomNotFound } from './errors.js';

/**
 * Domain RBAC, in one place. Every room-scoped read and write goes through
 * `requireRoom`. The rules:
 * - a credential acts in one billing entity: an organization, or the user's personal scope; rooms of any
 *   other entity answer 404 `not_found`, as if they did not exist;
 * - a direct-message room (`roomType=1`) answers 404 `room_not_found`;
 * - `read`: a room member, or an owner/admin of the room's organization;
 * - `write` (messages, tasks, records, files, approvals): a room member;
 * - `manage` (rename, add members, webhooks): the room's creator or an owner/admin of its organization.
 * A room the user cannot read answers 404; one they can read but not change answers 403 `forbidden`.
 * Agents and apps never exceed the human they act for: the checks run on `actor.userId`, read from the
 * database on every request (so a human who loses access mid-run takes the agent's access with them).
 * A room-restricted actor (`actor.roomId`, an agent run's delegated token) sees only that room: any other
 * answers 404 like a room of another organization.
 *
 * Two doors, and every read or write of room data passes one of them: `requireRoom` for one room (by id), and
 * `readableRooms` for whatever reads across rooms (the room list, the event log, search, user names): the
 * stores turn that scope into their condition. Both apply the same rules, the room restriction included; a
 * query of room data that names no room goes through the second (test/security/delegatedRoom.test.ts walks
 * every tool and operation).
 */
export type RoomAccess = 'read' | 'write' | 'manage';

export async function orgRole(m: EntityManager, userId: string, organizationId: string): Promise<OrgRole | null> {
  return orgRoleOf(m, userId, organizationId);
}

/** Where a room read for a change keeps its count of active webhooks at that read (see `activeWebhooksOf`). */
const WEBHOOKS = Symbol('activeWebhooks');

/**
 * How many active webhooks the room had when `requireRoom` read it for a change, in the caller's transaction;
 * undefined for a room read otherwise (for reading, or created by the transaction). The count is that of the
 * access check at the transaction's start, so a transaction that adds a webhook to the room after it must
 * not take it for the room's current one (none does: webhook configuration emits no event).
 */
export const activeWebhooksOf = (room: Room): number | undefined => (room as Room & { [WEBHOOKS]?: number })[WEBHOOKS];

export async function requireRoom(m: EntityManager, actor: Actor, roomId: string, need: RoomAccess): Promise<Room> {
  // a room-restricted credential (an agent run's delegated token) sees no other room at all
  if (actor.roomId !== undefined && actor.roomId !== roomId) throw notFound('Room');
  // with a change, the room's active webhooks too: every change emits an event (see `activeWebhooksOf`)
  const found = await roomWithAccessOf(m, actor.userId, roomId, need !== 'read');
  if (!found || found.room.organizationId !== actor.organizationId) throw notFound('Room');
  const room: Room & { [WEBHOOKS]?: number } = found.room;
  if (found.webhooks !== undefined) room[WEBHOOKS] = found.webhooks;
  const orgRoleOfCaller = found.role;
  const role = room.organizationId ? orgRoleOfCaller : null;
  if (room.organizationId && !role) throw notFound('Room');
  if (room.roomType === 1) throw roomNotFound();
  const member = found.member;
  const orgAdmin = role === 'owner' || role === 'admin';
  if (!member && !orgAdmin) throw notFound('Room');
  if (need === 'write' && !member) throw new DomainError('forbidden', 'Only room members can do this');
  if (need === 'manage' && !orgAdmin && room.createdById !== actor.userId) {
    throw new DomainError('forbidden', 'Only the room creator or an organization admin can do this');
  }
  return room;
}

/**
 * The ordinary rooms the actor can read in its billing entity: `requireRoom`'s rules for a list. In an
 * organization, all of its rooms for an owner or admin, the rooms they are a member of for a member, none without
 * a membership; outside one, the personal rooms they are a member of; a room-restricted actor (an agent run's
 * delegated token) only its room, whatever else. The stores turn it into their condition (db/stores/rooms.ts).
 */
export async function readableRooms(m: EntityManager, actor: Actor): Promise<RoomScope> {
  const scope: RoomScope = { userId: actor.userId, organizationId: actor.organizationId, rooms: 'member' };
  if (actor.roomId !== undefined) scope.roomId = actor.roomId;
  if (actor.organizationId) {
    const role = await orgRole(m, actor.userId, actor.organizationId);
    scope.rooms = !role ? 'none' : role === 'member' ? 'member' : 'all';
  }
  return scope;
}

/** The ids of the rooms the actor can read (`readableRooms`), in id order. */
export async function readableRoomIds(m: EntityManager, actor: Actor): Promise<string[]> {
  return roomIdsInScope(m, await readableRooms(m, actor));
}

/** The organization the actor acts in must still count the user as a member (or 404 for foreign ones). */
export async function requireOrgMember(m: EntityManager, actor: Actor, organizationId: string): Promise<OrgRole> {
  if (actor.organizationId !== organizationId) throw notFound('Organization');
  const role = await orgRole(m, actor.userId, organizationId);
  if (!role) throw notFound('Organization');
  return role;
}

/**
 * The rooms the actor can read whose name (case-insensitive) or id starts with `prefix`, by name, at most
 * `limit`: what MCP `completion/complete` offers for a `roomId`. The rooms are `readableRooms`,
 * so a completion never names a room the room list would not show.
 */
export async function readableRoomsByPrefix(
  m: EntityManager,
  actor: Actor,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  return roomsByPrefix(m, await readableRooms(m, actor), prefix, limit);
}

/**
 * The names of those of `ids` the actor can see, the one lookup of user names for texts (MCP results): the actor
 * itself, the members of the rooms it can read (`readableRooms`: a room-restricted actor, its room only),
 * and, acting in an organization it still belongs to and not restricted to a room, that organization's members.
 * Anyone else (a user of another organization, an id that is no user) has no name here: the id stands.
 */
export async function visibleUserNames(
  m: EntityManager,
  actor: Actor,
  ids: Iterable<string>,
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  const scope = await readableRooms(m, actor);
  const organization = actor.organizationId && actor.roomId === undefined ? actor.organizationId : null;
  return userNamesSeenBy(m, scope, organization, wanted);
}

/**
 * The records (by title) or files (by name) of a room the actor can read whose name (case-insensitive) or id
 * starts with `prefix`, by name, at most `limit`: what MCP `completion/complete` offers for a `recordId` or a
 * `fileId`. A room the actor cannot read (or that does not exist) has none, the same answer as a readable room
 * with no match, so a completion never tells another room's existence.
 */
export async function readableRoomObjectsByPrefix(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  kind: 'record' | 'file',
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  try {
    await requireRoom(m, actor, roomId, 'read');
  } catch (err) {
    if (err instanceof DomainError && err.status === 404) return [];
    throw err;
  }
  return (kind === 'record' ? recordsByPrefix : filesByPrefix)(m, roomId, prefix, limit);
}

/** The kinds of room data `roomHolds` answers for. */
export type RoomObjectKind = 'message' | 'task' | 'record' | 'file';

const IN_ROOM = { message: messageInRoom, task: taskInRoom, record: recordInRoom, file: fileInRoom } as const;

/**
 * Whether the room holds the object (`id` of that kind, in that room): for a caller that has already passed
 * `requireRoom` for the room and names an object in it. With the DataSource, it reads committed rows only.
 */
export async function roomHolds(
  db: DataSource | EntityManager,
  roomId: string,
  kind: RoomObjectKind,
  id: string,
): Promise<boolean> {
  return IN_ROOM[kind](db, roomId, id);
}
