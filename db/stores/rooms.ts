import type { EntityManager } from 'typeorm';
import { Room, RoomMember } from '../entities/index.js';
import { LIMIT_PARAM, sql } from '../sql.js';
import { likePrefix, tableColumns } from './columns.js';
import { keysetEntities, keysetRows, type KeysetBounds } from './paging.js';

/**
 * Rooms and their members. Reads on the request path (a room with the caller's access: db/stores/access.ts; the
 * room list) are prepared SQL over `ROOMS`; the rare writes (a room created, renamed, a member added) and the
 * member list go through TypeORM's entities.
 */
export const ROOMS = tableColumns<Room>('rooms', [
  'id',
  'name',
  'roomType',
  'organizationId',
  'createdById',
  'createdAt',
  'updatedAt',
]);

/**
 * Which rooms a caller can read, as the domain's rules decided it (src/domain/access.ts `readableRooms`): the
 * ordinary rooms of `organizationId` (null: the personal ones), all of them or only those `userId` is a member
 * of, or none at all; `roomId` narrows it to that one room.
 */
export interface RoomScope {
  userId: string;
  organizationId: string | null;
  rooms: 'all' | 'member' | 'none';
  roomId?: string;
}

const IN_ROOMS_OF_USER = ' AND r."id" IN (SELECT rm."roomId" FROM "room_members" rm WHERE rm."userId" = ?)';

/** The scope as a condition on `"rooms" r` and its `?` parameters. */
export function roomScopeWhere(scope: RoomScope): { where: string; params: unknown[] } {
  let where = 'r."roomType" = 0';
  const params: unknown[] = [];
  if (scope.roomId !== undefined) {
    where += ' AND r."id" = ?';
    params.push(scope.roomId);
  }
  if (scope.organizationId) {
    where += ' AND r."organizationId" = ?';
    params.push(scope.organizationId);
  } else where += ' AND r."organizationId" IS NULL';
  if (scope.rooms === 'none') where += ' AND 1 = 0';
  else if (scope.rooms === 'member') {
    where += IN_ROOMS_OF_USER;
    params.push(scope.userId);
  }
  return { where, params };
}

/** `<column> IN (the rooms of the scope)`, for a table of room data (`x."roomId"`). */
export function inRoomScope(scope: RoomScope, column: string): { where: string; params: unknown[] } {
  const rooms = roomScopeWhere(scope);
  return { where: `${column} IN (SELECT r."id" FROM "rooms" r WHERE ${rooms.where})`, params: rooms.params };
}

/** The ids of the rooms of the scope, in id order. */
export async function roomIdsInScope(m: EntityManager, scope: RoomScope): Promise<string[]> {
  const rooms = roomScopeWhere(scope);
  const rows = await sql<{ id: string }>(m, `SELECT r."id" FROM "rooms" r WHERE ${rooms.where} ORDER BY r."id"`, [
    ...rooms.params,
  ]);
  return rows.rows.map((r) => r.id);
}

/** The rooms of the scope whose name (case-insensitive) or id starts with `prefix`, by name, at most `limit`. */
export async function roomsByPrefix(
  m: EntityManager,
  scope: RoomScope,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  const rooms = roomScopeWhere(scope);
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

export async function roomExists(m: EntityManager, id: string): Promise<boolean> {
  return (await m.countBy(Room, { id })) > 0;
}

export async function insertRoom(m: EntityManager, room: Room): Promise<Room> {
  const row = m.create(Room, room);
  await m.insert(Room, row);
  return row;
}

export async function renameRoom(m: EntityManager, id: string, name: string, updatedAt: string): Promise<void> {
  await m.update(Room, { id }, { name, updatedAt });
}

/** A page of the rooms of the scope, in creation order. */
export async function roomsPage(m: EntityManager, scope: RoomScope, bounds: KeysetBounds): Promise<Room[]> {
  const { where, params } = roomScopeWhere(scope);
  return keysetRows<Room>(
    m,
    { select: `SELECT ${ROOMS.list('r')} FROM "rooms" r WHERE ${where}`, params, key: 'r."id"' },
    bounds,
  );
}

const IS_ROOM_MEMBER = 'SELECT 1 FROM "room_members" WHERE "roomId" = ? AND "userId" = ?';

/** Whether `userId` is a member of the room (one prepared statement: a task's assignee is checked with it). */
export async function isRoomMember(m: EntityManager, roomId: string, userId: string): Promise<boolean> {
  return (await sql(m, IS_ROOM_MEMBER, [roomId, userId])).rows.length > 0;
}

export async function roomMember(m: EntityManager, roomId: string, userId: string): Promise<RoomMember | null> {
  return m.findOneBy(RoomMember, { roomId, userId });
}

export async function insertRoomMember(m: EntityManager, member: RoomMember): Promise<void> {
  await m.insert(RoomMember, member);
}

/** A page of the room's members, in the order they joined. */
export async function roomMembersPage(m: EntityManager, roomId: string, bounds: KeysetBounds): Promise<RoomMember[]> {
  const qb = m.getRepository(RoomMember).createQueryBuilder('rm').where('rm.roomId = :roomId', { roomId });
  return keysetEntities(qb, 'rm.id', bounds);
}

/** The rooms of an organization, oldest first, with their number of members (the operator's list). */
export async function roomsOfOrganization(
  m: EntityManager,
  organizationId: string,
): Promise<(Room & { members: number })[]> {
  const rooms = await m.find(Room, { where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });
  const counts = await countPer(
    m,
    'RoomMember',
    'roomId',
    rooms.map((r) => r.id),
  );
  return rooms.map((r) => Object.assign(r, { members: counts.get(r.id) ?? 0 }));
}

/** `COUNT(*)` per value of `column` of an entity's table, e.g. members per room. */
export async function countPer(
  m: EntityManager,
  entity: string,
  column: string,
  ids: string[],
): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await m
    .createQueryBuilder(entity, 'x')
    .select(`x.${column}`, 'id')
    .addSelect('COUNT(*)', 'n')
    .where(`x.${column} IN (:...ids)`, { ids })
    .groupBy(`x.${column}`)
    .getRawMany<{ id: string; n: string | number }>();
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}
