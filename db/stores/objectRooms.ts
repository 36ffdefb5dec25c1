import type { EntityManager } from 'typeorm';
import { sql } from '../sql.js';

/** The tables of the objects a room holds that a resource URI can name below its room. */
const TABLES = { record: 'records', file: 'files' } as const;

export type RoomObjectKind = keyof typeof TABLES;

/** One statement per kind, written once: the table name is never taken from a caller. */
const IN_ROOM = {
  record: `SELECT 1 AS "one" FROM "${TABLES.record}" WHERE "id" = ? AND "roomId" = ?`,
  file: `SELECT 1 AS "one" FROM "${TABLES.file}" WHERE "id" = ? AND "roomId" = ?`,
} satisfies Record<RoomObjectKind, string>;

/** Whether the object of that kind with that id lies in that room. */
export async function objectInRoom(
  m: EntityManager,
  kind: RoomObjectKind,
  roomId: string,
  id: string,
): Promise<boolean> {
  return (await sql(m, IN_ROOM[kind], [id, roomId])).rows.length > 0;
}

/** The ids of the rooms matching a condition on `r` (the rooms table), in order. */
export async function roomIdsWhere(m: EntityManager, where: string, params: unknown[]): Promise<string[]> {
  const rows = await sql<{ id: string }>(m, `SELECT r."id" FROM "rooms" r WHERE ${where} ORDER BY r."id"`, params);
  return rows.rows.map((r) => r.id);
}
