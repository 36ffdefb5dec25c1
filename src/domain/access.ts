import type { EntityManager } from 'typeorm';
import type { OrgRole, Room } from '../../db/entities/index.js';
import { LIMIT_PARAM, sql } from '../../db/sql.js';
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
 * `readableRoomsWhere` / `inReadableRooms` for whatever reads across rooms (the room list, the event log,
 * search). Both apply the same rules, the room restriction included; a query of room data that names no
 * room goes through the second (test/security/delegatedRoom.test.ts walks every tool and operation).
 */
export type RoomAccess = 'read' | 'write' | 'manage';

export async function orgRole(m: EntityManager, userId: string, organizationId: string): Promise<OrgRole | null> {
  const row = (await sql<{ role: OrgRole }>(m, ORG_ROLE, [userId, organizationId])).rows[0];
  return row?.role ?? null;
}

const ORG_ROLE = 'SELECT "role" FROM "memberships" WHERE "userId" = ? AND "organizationId" = ?';

/**
 * The room with what the rules need of the caller, in one statement (was three ORM reads): the caller's role
 * in the room's organization (null when none, or a personal room) and whether the caller is a room member.
 * For a change (`write`, `manage`) also the room's active webhooks, counted: every change emits an event, and
 * its transactional outbox (src/webhooks/outbox.ts) need not look the webhooks up again when there are none.
 */
const roomWithAccess = (webhooks: string) =>
  'SELECT r."id", r."name", r."roomType", r."organizationId", r."createdById", r."createdAt", r."updatedAt", ' +
  '(SELECT ms."role" FROM "memberships" ms WHERE ms."userId" = ? AND ms."organizationId" = r."organizationId") AS "role", ' +
  `(SELECT COUNT(*) FROM "room_members" rm WHERE rm."roomId" = r."id" AND rm."userId" = ?) AS "member"${webhooks} ` +
  'FROM "rooms" r WHERE r."id" = ?';
const ROOM_WITH_ACCESS = roomWithAccess('');
const ROOM_WITH_ACCESS_AND_WEBHOOKS = roomWithAccess(
  ', (SELECT COUNT(*) FROM "webhooks" w WHERE w."roomId" = r."id" AND w."active" = TRUE) AS "webhooks"',
);

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
  const statement = need === 'read' ? ROOM_WITH_ACCESS : ROOM_WITH_ACCESS_AND_WEBHOOKS;
  const row = (
    await sql<Room & { role: OrgRole | null; member: number | string; webhooks?: number | string }>(m, statement, [
      actor.userId,
      actor.userId,
      roomId,
    ])
  ).rows[0];
  if (!row || row.organizationId !== actor.organizationId) throw notFound('Room');
  const { role: orgRoleOfCaller, member: memberCount, webhooks, ...fields } = row;
  const room: Room & { [WEBHOOKS]?: number } = { ...fields, roomType: Number(fields.roomType) };
  if (webhooks !== undefined) room[WEBHOOKS] = Number(webhooks);
  const role = room.organizationId ? orgRoleOfCaller : null;
  if (room.organizationId && !role) throw notFound('Room');
  if (room.roomType === 1) throw roomNotFound();
  const member = Number(memberCount) > 0;
  const orgAdmin = role === 'owner' || role === 'admin';
  if (!member && !orgAdmin) throw notFound('Room');
  if (need === 'write' && !member) throw new DomainError('forbidden', 'Only room members can do this');
  if (need === 'manage' && !orgAdmin && room.createdById !== actor.userId) {
    throw new DomainError('forbidden', 'Only the room creator or an organization admin can do this');
  }
  return room;
}

const IN_ROOMS_OF_USER = ' AND r."id" IN (SELECT rm."roomId" FROM "room_members" rm WHERE rm."userId" = ?)';

/**
 * The ordinary rooms the actor can read in its billing entity, as a condition on `"rooms" r` and its `?`
 * parameters: `requireRoom`'s rules for a list. In an organization, all of its rooms for an owner or admin,
 * the rooms they are a member of for a member, none without a membership; outside one, the personal rooms
 * they are a member of; a room-restricted actor (an agent run's delegated token) only its room, whatever else.
 */
export async function readableRoomsWhere(
  m: EntityManager,
  actor: Actor,
): Promise<{ where: string; params: unknown[] }> {
  let where = 'r."roomType" = 0';
  const params: unknown[] = [];
  if (actor.roomId !== undefined) {
    where += ' AND r."id" = ?';
    params.push(actor.roomId);
  }
  if (actor.organizationId) {
    const role = await orgRole(m, actor.userId, actor.organizationId);
    where += ' AND r."organizationId" = ?';
    params.push(actor.organizationId);
    if (!role) where += ' AND 1 = 0';
    else if (role === 'member') {
      where += IN_ROOMS_OF_USER;
      params.push(actor.userId);
    }
  } else {
    where += ` AND r."organizationId" IS NULL${IN_ROOMS_OF_USER}`;
    params.push(actor.userId);
  }
  return { where, params };
}

/** `<column> IN (the rooms the actor can read)`, for a table of room data (`x."roomId"`): see `readableRoomsWhere`. */
export async function inReadableRooms(
  m: EntityManager,
  actor: Actor,
  column: string,
): Promise<{ where: string; params: unknown[] }> {
  const rooms = await readableRoomsWhere(m, actor);
  return { where: `${column} IN (SELECT r."id" FROM "rooms" r WHERE ${rooms.where})`, params: rooms.params };
}

/** The organization the actor acts in must still count the user as a member (or 404 for foreign ones). */
export async function requireOrgMember(m: EntityManager, actor: Actor, organizationId: string): Promise<OrgRole> {
  if (actor.organizationId !== organizationId) throw notFound('Organization');
  const role = await orgRole(m, actor.userId, organizationId);
  if (!role) throw notFound('Organization');
  return role;
}

/** `value` as a LIKE prefix pattern (ESCAPE '\'): `%`, `_` and `\` typed by a caller match themselves. */
export const likePrefix = (value: string): string => `${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The rooms the actor can read whose name (case-insensitive) or id starts with `prefix`, by name, at most
 * `limit`: what MCP `completion/complete` offers for a `roomId`. The condition is `readableRoomsWhere`'s,
 * so a completion never names a room the room list would not show.
 */
export async function readableRoomsByPrefix(
  m: EntityManager,
  actor: Actor,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  const rooms = await readableRoomsWhere(m, actor);
  const pattern = likePrefix(prefix);
  return (
    await sql<{ id: string; name: string }>(
      m,
      `SELECT r."id", r."name" FROM "rooms" r WHERE ${rooms.where} AND (LOWER(r."name") LIKE ? ESCAPE '\\' OR r."id" LIKE ? ESCAPE '\\') ` +
        `ORDER BY LOWER(r."name"), r."id" ${LIMIT_PARAM}`,
      [...rooms.params, pattern.toLowerCase(), pattern, limit],
    )
  ).rows;
}

/** Ids looked up in one statement at most (a page of results names far fewer users). */
const NAMES_PER_QUERY = 500;

/**
 * The names of those of `ids` the actor can see, the one lookup of user names for texts (MCP results): the actor
 * itself, the members of the rooms it can read (`readableRoomsWhere`: a room-restricted actor, its room only),
 * and, acting in an organization it still belongs to and not restricted to a room, that organization's members.
 * Anyone else (a user of another organization, an id that is no user) has no name here: the id stands.
 */
export async function visibleUserNames(
  m: EntityManager,
  actor: Actor,
  ids: Iterable<string>,
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  const names = new Map<string, string>();
  if (!wanted.length) return names;
  const rooms = await readableRoomsWhere(m, actor);
  let seen =
    'u."id" = ? OR u."id" IN (SELECT rm."userId" FROM "room_members" rm WHERE rm."roomId" IN ' +
    `(SELECT r."id" FROM "rooms" r WHERE ${rooms.where}))`;
  const params: unknown[] = [actor.userId, ...rooms.params];
  if (actor.organizationId && actor.roomId === undefined) {
    seen +=
      ' OR u."id" IN (SELECT ms."userId" FROM "memberships" ms WHERE ms."organizationId" = ? AND EXISTS ' +
      '(SELECT 1 FROM "memberships" me WHERE me."organizationId" = ? AND me."userId" = ?))';
    params.push(actor.organizationId, actor.organizationId, actor.userId);
  }
  for (let i = 0; i < wanted.length; i += NAMES_PER_QUERY) {
    const chunk = wanted.slice(i, i + NAMES_PER_QUERY);
    const rows = await sql<{ id: string; name: string }>(
      m,
      `SELECT u."id", u."name" FROM "users" u WHERE u."id" IN (${chunk.map(() => '?').join(', ')}) AND (${seen})`,
      [...chunk, ...params],
    );
    for (const r of rows.rows) names.set(r.id, r.name);
  }
  return names;
}
