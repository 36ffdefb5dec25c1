import type { EntityManager } from 'typeorm';
import type { OrgRole, Room } from '../entities/index.js';
import { sql } from '../sql.js';
import { placeholders } from './columns.js';
import { ROOMS, roomScopeWhere, type RoomScope } from './rooms.js';

/**
 * The statements of the access rules (src/domain/access.ts decides; this store reads): the caller's role in an
 * organization, a room with what the rules need of the caller, and the condition "the rooms this caller can read"
 * that every read across rooms (the room list, the event log, search, user names, completions) shares.
 */

const ORG_ROLE = 'SELECT "role" FROM "memberships" WHERE "userId" = ? AND "organizationId" = ?';

export async function orgRoleOf(m: EntityManager, userId: string, organizationId: string): Promise<OrgRole | null> {
  const row = (await sql<{ role: OrgRole }>(m, ORG_ROLE, [userId, organizationId])).rows[0];
  return row?.role ?? null;
}

/**
 * The room with what the rules need of the caller, in one statement (was three ORM reads): the caller's role
 * in the room's organization (null when none, or a personal room) and whether the caller is a room member.
 * For a change also the room's active webhooks, counted: every change emits an event, and its transactional
 * outbox need not look the webhooks up again when there are none.
 */
const roomWithAccess = (webhooks: string) =>
  `SELECT ${ROOMS.list('r')}, ` +
  '(SELECT ms."role" FROM "memberships" ms WHERE ms."userId" = ? AND ms."organizationId" = r."organizationId") AS "role", ' +
  `(SELECT COUNT(*) FROM "room_members" rm WHERE rm."roomId" = r."id" AND rm."userId" = ?) AS "member"${webhooks} ` +
  'FROM "rooms" r WHERE r."id" = ?';
const ROOM_WITH_ACCESS = roomWithAccess('');
const ROOM_WITH_ACCESS_AND_WEBHOOKS = roomWithAccess(
  ', (SELECT COUNT(*) FROM "webhooks" w WHERE w."roomId" = r."id" AND w."active" = TRUE) AS "webhooks"',
);

/** A room read with the caller's standing in it (`roomWithAccess`). */
export interface RoomWithAccess {
  room: Room;
  /** The caller's role in the room's organization; null without a membership. */
  role: OrgRole | null;
  /** Whether the caller is a member of the room. */
  member: boolean;
  /** The room's active webhooks, when asked for (`withWebhooks`). */
  webhooks?: number;
}

export async function roomWithAccessOf(
  m: EntityManager,
  userId: string,
  roomId: string,
  withWebhooks: boolean,
): Promise<RoomWithAccess | null> {
  const statement = withWebhooks ? ROOM_WITH_ACCESS_AND_WEBHOOKS : ROOM_WITH_ACCESS;
  const row = (
    await sql<Room & { role: OrgRole | null; member: number | string; webhooks?: number | string }>(m, statement, [
      userId,
      userId,
      roomId,
    ])
  ).rows[0];
  if (!row) return null;
  const { role, member, webhooks, ...fields } = row;
  return {
    room: { ...fields, roomType: Number(fields.roomType) },
    role,
    member: Number(member) > 0,
    ...(webhooks !== undefined ? { webhooks: Number(webhooks) } : {}),
  };
}

/** Ids looked up in one statement at most (a page of results names far fewer users). */
const NAMES_PER_QUERY = 500;

/**
 * The names of those of `ids` who are `userId` itself, members of the rooms of the scope, or, with
 * `organizationId`, members of that organization while `userId` is one too.
 */
export async function userNamesSeenBy(
  m: EntityManager,
  scope: RoomScope,
  organizationId: string | null,
  ids: string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const rooms = roomScopeWhere(scope);
  let seen =
    'u."id" = ? OR u."id" IN (SELECT rm."userId" FROM "room_members" rm WHERE rm."roomId" IN ' +
    `(SELECT r."id" FROM "rooms" r WHERE ${rooms.where}))`;
  const params: unknown[] = [scope.userId, ...rooms.params];
  if (organizationId) {
    seen +=
      ' OR u."id" IN (SELECT ms."userId" FROM "memberships" ms WHERE ms."organizationId" = ? AND EXISTS ' +
      '(SELECT 1 FROM "memberships" me WHERE me."organizationId" = ? AND me."userId" = ?))';
    params.push(organizationId, organizationId, scope.userId);
  }
  for (let i = 0; i < ids.length; i += NAMES_PER_QUERY) {
    const chunk = ids.slice(i, i + NAMES_PER_QUERY);
    const rows = await sql<{ id: string; name: string }>(
      m,
      `SELECT u."id", u."name" FROM "users" u WHERE u."id" IN (${placeholders(chunk)}) AND (${seen})`,
      [...chunk, ...params],
    );
    for (const r of rows.rows) names.set(r.id, r.name);
  }
  return names;
}
