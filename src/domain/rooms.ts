import type { EntityManager } from 'typeorm';
import { Membership, Organization, Room, RoomMember, User } from '../../db/entities/index.js';
import { readableRoomsWhere, requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { DomainError, notFound, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { keysetPage, keysetRows, type PageInput } from './paging.js';
import { iso } from './time.js';

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
  if (!(await m.countBy(User, { id: o.createdById }))) throw notFound('User');
  if (o.organizationId && !(await m.countBy(Organization, { id: o.organizationId }))) throw notFound('Organization');
  const room = m.create(Room, {
    id: newId('room', now.getTime()),
    name: o.name.trim(),
    roomType: o.roomType ?? 0,
    organizationId: o.organizationId,
    createdById: o.createdById,
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  await m.insert(Room, room);
  for (const userId of new Set([o.createdById, ...(o.memberIds ?? [])])) {
    await insertMember(m, now, room.id, userId);
  }
  return room;
}

async function insertMember(m: EntityManager, now: Date, roomId: string, userId: string): Promise<boolean> {
  if (await m.countBy(RoomMember, { roomId, userId })) return false;
  await m.insert(RoomMember, { id: newId('rmm', now.getTime()), roomId, userId, createdAt: iso(now) });
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

const ROOM_COLUMNS =
  'r."id", r."name", r."roomType", r."organizationId", r."createdById", r."createdAt", r."updatedAt"';

/** Ordinary rooms the actor can read in its billing entity, in creation order (rules: access.ts). */
export async function listRooms(m: EntityManager, actor: Actor, page: PageInput, secret: string) {
  const { where, params } = await readableRoomsWhere(m, actor);
  return keysetRows<Room>(
    m,
    { select: `SELECT ${ROOM_COLUMNS} FROM "rooms" r WHERE ${where}`, params, key: 'r."id"' },
    (r) => r.id,
    page,
    secret,
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
  await m.update(Room, { id: room.id }, { name: room.name, updatedAt: room.updatedAt });
  return room;
}

export async function listMembers(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  const qb = m.getRepository(RoomMember).createQueryBuilder('rm').where('rm.roomId = :roomId', { roomId });
  return keysetPage(qb, 'rm.id', (r) => r.id, page, secret);
}

/**
 * Whether `userId` is someone the caller may add to `room`: in an organization's room, a member of that
 * organization (the caller's membership is already established by `requireRoom`); in a personal room, someone
 * who shares at least one organization with the caller (or the caller themself). One query either way, so an
 * unknown user and a user out of reach are indistinguishable.
 */
async function reachableUser(m: EntityManager, actor: Actor, room: Room, userId: string): Promise<boolean> {
  if (room.organizationId) return (await m.countBy(Membership, { organizationId: room.organizationId, userId })) > 0;
  if (userId === actor.userId) return (await m.countBy(User, { id: userId })) > 0;
  const shared = await m
    .getRepository(Membership)
    .createQueryBuilder('theirs')
    .innerJoin(Membership, 'mine', 'mine.organizationId = theirs.organizationId AND mine.userId = :me', {
      me: actor.userId,
    })
    .where('theirs.userId = :them', { them: userId })
    .getCount();
  return shared > 0;
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
  const member = await m.findOneByOrFail(RoomMember, { roomId, userId });
  if (added) await emitEvent(m, { type: 'room.member.added', room, object: { type: 'room', id: room.id }, actor, now });
  return { member, added };
}

export async function addMemberAsOperator(m: EntityManager, now: Date, roomId: string, userId: string): Promise<void> {
  if (!(await m.countBy(Room, { id: roomId }))) throw notFound('Room');
  if (!(await m.countBy(User, { id: userId }))) throw notFound('User');
  await insertMember(m, now, roomId, userId);
}
