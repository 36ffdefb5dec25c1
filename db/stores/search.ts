import type { EntityManager } from 'typeorm';
import type { Message, Task } from '../entities/index.js';
import { LIMIT_PARAM, sql } from '../sql.js';
import { likeContains } from './columns.js';
import { inRoomScope, type RoomScope } from './rooms.js';

/** The tables search reads, and the text columns of each it matches. */
const SEARCHED = { messages: ['body'], tasks: ['title', 'description'] } as const;

/**
 * Rows of `table` in the rooms of the scope whose text columns contain `q` case-insensitively, newest first
 * (later `createdAt`, then the larger id), below the key `after` when given, at most `limit`. A plain `LIKE`
 * (with `ESCAPE`, on `LOWER(…)`, the same on SQLite and PostgreSQL): no index serves a substring match, so the
 * cost grows with the rows of those rooms.
 */
export async function searchRows<K extends keyof typeof SEARCHED>(
  m: EntityManager,
  table: K,
  scope: RoomScope,
  q: string,
  after: [createdAt: string, id: string] | undefined,
  limit: number,
): Promise<(K extends 'messages' ? Message : Task)[]> {
  const columns = SEARCHED[table];
  const pattern = likeContains(q);
  const rooms = inRoomScope(scope, 'x."roomId"');
  let text = `SELECT x.* FROM "${table}" x WHERE ${rooms.where} AND (${columns.map((c) => `LOWER(x."${c}") LIKE ? ESCAPE '\\'`).join(' OR ')})`;
  const params = [...rooms.params, ...columns.map(() => pattern)];
  if (after) {
    text += ' AND (x."createdAt" < ? OR (x."createdAt" = ? AND x."id" < ?))';
    params.push(after[0], after[0], after[1]);
  }
  params.push(limit);
  const rows = await sql<K extends 'messages' ? Message : Task>(
    m,
    `${text} ORDER BY x."createdAt" DESC, x."id" DESC ${LIMIT_PARAM}`,
    params,
  );
  return rows.rows;
}
