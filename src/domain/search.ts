import type { EntityManager } from 'typeorm';
import type { Message, Task } from '../../db/entities/index.js';
import { searchRows } from '../../db/stores/search.js';
import { readableRooms } from './access.js';
import type { Actor } from './actor.js';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, type Page } from './paging.js';
import { validationError } from './errors.js';

export type SearchType = 'messages' | 'tasks';

export type SearchHit = { type: 'message'; item: Message } | { type: 'task'; item: Task };

export interface SearchInput {
  q: string;
  types: SearchType[];
  limit?: number;
  cursor?: string;
}

/** Newest first: later `createdAt`, then the larger id (ids of one millisecond are ordered too). */
const newerFirst = (a: SearchHit, b: SearchHit) =>
  a.item.createdAt === b.item.createdAt
    ? a.item.id < b.item.id
      ? 1
      : a.item.id > b.item.id
        ? -1
        : 0
    : a.item.createdAt < b.item.createdAt
      ? 1
      : -1;

/**
 * Messages (body) and tasks (title, description) containing `q`, case-insensitively, in the rooms the actor
 * can read (`readableRooms`, the rules of `requireRoom`), newest first and paged. A plain `LIKE` (with
 * `ESCAPE`, on `LOWER(…)`, the same on SQLite and PostgreSQL) over the readable rooms: no index serves a
 * substring match, so the cost grows with the rows of those rooms. Keyset paging over (createdAt, id) across
 * both tables: each page reads at most limit+1 rows of each type below the cursor and merges them.
 */
export async function search(
  m: EntityManager,
  actor: Actor,
  input: SearchInput,
  secret: string,
): Promise<Page<SearchHit>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  let after: [string, string] | undefined;
  if (input.cursor) {
    const key = decodeCursor(secret, input.cursor, 'desc');
    try {
      const parsed = JSON.parse(key) as unknown;
      if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((v) => typeof v === 'string'))
        after = parsed as [string, string];
    } catch {
      /* refused below */
    }
    if (!after) throw validationError('Invalid cursor', { field: 'cursor', reason: 'not a search cursor' });
  }
  // the rooms the actor can read, by access.ts's one scope (a delegated token's room restriction included)
  const rooms = await readableRooms(m, actor);
  const hits: SearchHit[] = [];
  if (input.types.includes('messages')) {
    for (const item of await searchRows(m, 'messages', rooms, input.q, after, limit + 1))
      hits.push({ type: 'message', item });
  }
  if (input.types.includes('tasks')) {
    for (const item of await searchRows(m, 'tasks', rooms, input.q, after, limit + 1))
      hits.push({ type: 'task', item });
  }
  hits.sort(newerFirst);
  const more = hits.length > limit;
  const data = hits.slice(0, limit);
  const last = data[data.length - 1];
  return {
    data,
    nextCursor: more ? encodeCursor(secret, JSON.stringify([last.item.createdAt, last.item.id]), 'desc') : null,
  };
}
