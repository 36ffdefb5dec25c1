import type { EntityManager } from 'typeorm';
import { Membership, Room, RoomMember, type OrgRole } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { DomainError, notFound, roomNotFound } from './errors.js';

/**
 * Domain RBAC, in one place (spec 5.5 condition 4). Every room-scoped read and write goes through
 * `requireRoom`. The rules:
 * - a credential acts in one billing entity: an organization, or the user's personal scope; rooms of any
 *   other entity answer 404 `not_found`, as if they did not exist (spec 4 rule 5);
 * - a direct-message room (`roomType=1`) answers 404 `room_not_found` (spec 4 rule 4);
 * - `read`: a room member, or an owner/admin of the room's organization;
 * - `write` (messages, tasks, records, files, approvals): a room member;
 * - `manage` (rename, add members, webhooks): the room's creator or an owner/admin of its organization.
 * A room the user cannot read answers 404; one they can read but not change answers 403 `forbidden`.
 * Agents and apps never exceed the human they act for: the checks run on `actor.userId`, read from the
 * database on every request (so a human who loses access mid-run takes the agent's access with them).
 * A room-restricted actor (`actor.roomId`, an agent run's delegated token) sees only that room: any other
 * answers 404 like a room of another organization, and room lists (`listRooms`, `listEvents`) show only it.
 */
export type RoomAccess = 'read' | 'write' | 'manage';

export async function orgRole(m: EntityManager, userId: string, organizationId: string): Promise<OrgRole | null> {
  const row = await m.findOneBy(Membership, { userId, organizationId });
  return row?.role ?? null;
}

export async function requireRoom(m: EntityManager, actor: Actor, roomId: string, need: RoomAccess): Promise<Room> {
  // a room-restricted credential (an agent run's delegated token) sees no other room at all
  if (actor.roomId !== undefined && actor.roomId !== roomId) throw notFound('Room');
  const room = await m.findOneBy(Room, { id: roomId });
  if (!room || room.organizationId !== actor.organizationId) throw notFound('Room');
  const role = room.organizationId ? await orgRole(m, actor.userId, room.organizationId) : null;
  if (room.organizationId && !role) throw notFound('Room');
  if (room.roomType === 1) throw roomNotFound();
  const member = (await m.countBy(RoomMember, { roomId, userId: actor.userId })) > 0;
  const orgAdmin = role === 'owner' || role === 'admin';
  if (!member && !orgAdmin) throw notFound('Room');
  if (need === 'write' && !member) throw new DomainError('forbidden', 'Only room members can do this');
  if (need === 'manage' && !orgAdmin && room.createdById !== actor.userId) {
    throw new DomainError('forbidden', 'Only the room creator or an organization admin can do this');
  }
  return room;
}

/** The organization the actor acts in must still count the user as a member (or 404 for foreign ones). */
export async function requireOrgMember(m: EntityManager, actor: Actor, organizationId: string): Promise<OrgRole> {
  if (actor.organizationId !== organizationId) throw notFound('Organization');
  const role = await orgRole(m, actor.userId, organizationId);
  if (!role) throw notFound('Organization');
  return role;
}
