import type { EntityManager } from 'typeorm';
import type { Room, RoomMember } from '../../db/entities/index.js';
import { isOrganizationMember, shareAnOrganization } from '../../db/stores/memberships.js';
import { organizationExists } from '../../db/stores/organizations.js';
import {
  insertRoom,
  insertRoomMember,
  isRoomMember,
  renameRoom,
  roomExists,
  roomMember,
  roomMembersPage,
  roomsOfOrganization,
  roomsPage,
} from '../../db/stores/rooms.js';
import { userExists } from '../../db/stores/users.js';
import { readableRooms, requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { DomainError, notFound, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';
import { iso } from './time.js';

export type { Room, RoomMember } from '../../db/entities/index.js';

export interface CreateRoomOptions {
  name: string;
  createdById: string;
  organizationId: string | null;
  roomType?: number;
  memberIds?: string[];
}

/** Creates a room; its creator is a member. Used by the operator CLI and (through `createRoomAs`) the API. */
export async function createRoom(m: EntityManager, now: Date, o: CreateRoomOptions): Promise<Room> {
  if (!o.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  if (!(await userExists(m, o.createdById))) throw notFound('User');
  if (o.organizationId && !(await organizationExists(m, o.organizationId))) throw notFound('Organization');
  const room = await insertRoom(m, {
    id: newId('room', now.getTime()),
    name: o.name.trim(),
    roomType: o.roomType ?? 0,
    organizationId: o.organizationId,
    createdById: o.createdById,
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  for (const userId of new Set([o.createdById, ...(o.memberIds ?? [])])) {
    await insertMember(m, now, room.id, userId);
  }
  return room;
}

async function insertMember(m: EntityManager, now: Date, roomId: string, userId: string): Promise<boolean> {
  if (await isRoomMember(m, roomId, userId)) return false;
  await insertRoomMember(m, { id: newId('rmm', now.getTime()), roomId, userId, createdAt: iso(now) });
  return true;
}

export async function createRoomAs(m: EntityManager, now: Date, actor: Actor, name: string): Promise<Room> {
  // a room-restricted credential (an agent run's delegated token) works in its one room, never a new one
  if (actor.roomId !== undefined)
    throw new DomainError('forbidden', 'This credential is restricted to one room and cannot create rooms');
  const room = await createRoom(m, now, { name, createdById: actor.userId, organizationId: actor.organizationId });
  await emitEvent(m, { type: 'room.created', room, object: { type: 'room', id: room.id }, actor, now });
  return room;
}

/** Ordinary rooms the actor can read in its billing entity, in creation order (rules: access.ts). */
export async function listRooms(m: EntityManager, actor: Actor, page: PageInput, secret: string) {
  const scope = await readableRooms(m, actor);
  return readPage<Room>(
    page,
    secret,
    (r) => r.id,
    (bounds) => roomsPage(m, scope, bounds),
  );
}

export async function updateRoom(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  patch: { name?: string },
): Promise<Room> {
  const room = await requireRoom(m, actor, roomId, 'manage');
  if (patch.name !== undefined) {
    if (!patch.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
    room.name = patch.name.trim();
  }
  room.updatedAt = iso(now);
  await renameRoom(m, room.id, room.name, room.updatedAt);
  return room;
}

export async function listMembers(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  return readPage<RoomMember>(
    page,
    secret,
    (r) => r.id,
    (bounds) => roomMembersPage(m, roomId, bounds),
  );
}

/**
 * Whether `userId` is someone the caller may add to `room`: in an organization's room, a member of that
 * organization (the caller's membership is already established by `requireRoom`); in a personal room, someone
 * who shares at least one organization with the caller (or the caller themself). One query either way, so an
 * unknown user and a user out of reach are indistinguishable.
 */
async function reachableUser(m: EntityManager, actor: Actor, room: Room, userId: string): Promise<boolean> {
  if (room.organizationId) return isOrganizationMember(m, room.organizationId, userId);
  if (userId === actor.userId) return userExists(m, userId);
  return shareAnOrganization(m, actor.userId, userId);
}

/**
 * Adds a user to a room. In an organization's room the user must belong to that organization; in a personal
 * room the user must share an organization with the caller. Anyone else answers 404 `not_found` exactly as an
 * unknown user does (no "user exists" oracle).
 */
export async function addMember(m: EntityManager, now: Date, actor: Actor, roomId: string, userId: string) {
  const room = await requireRoom(m, actor, roomId, 'manage');
  if (!(await reachableUser(m, actor, room, userId))) throw notFound('User');
  const added = await insertMember(m, now, room.id, userId);
  const member = await roomMember(m, roomId, userId);
  if (!member) throw new Error('The room member just added is not there');
  if (added) await emitEvent(m, { type: 'room.member.added', room, object: { type: 'room', id: room.id }, actor, now });
  return { member, added };
}

export async function addMemberAsOperator(m: EntityManager, now: Date, roomId: string, userId: string): Promise<void> {
  if (!(await roomExists(m, roomId))) throw notFound('Room');
  if (!(await userExists(m, userId))) throw notFound('User');
  await insertMember(m, now, roomId, userId);
}

/** A room as the operator's list shows it. */
export interface RoomListing {
  id: string;
  name: string;
  type: number;
  members: number;
  createdById: string;
  createdAt: string;
}

/**
 * The rooms of an organization, oldest first, with their number of members (an unknown organization is not
 * found): the operator's `svc room list`.
 */
export async function listRoomsForOperator(m: EntityManager, organizationId: string): Promise<RoomListing[]> {
  if (!(await organizationExists(m, organizationId))) throw notFound('Organization');
  return (await roomsOfOrganization(m, organizationId)).map((r) => ({
    id: r.id,
    name: r.name,
    type: r.roomType,
    members: r.members,
    createdById: r.createdById,
    createdAt: r.createdAt,
  }));
}
