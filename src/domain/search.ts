import type { EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { Message, Task } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, type Page } from './paging.js';
import { ROOMS_OF_USER } from './rooms.js';
import { validationError } from './errors.js';

export type SearchType = 'messages' | 'tasks';

export type SearchHit = { type: 'message'; item: Message } | { type: 'task'; item: Task };

export interface SearchInput {
  q: string;
  types: SearchType[];
  limit?: number;
  cursor?: string;
}

/**
 * Restricts `alias.roomId` to the ordinary rooms the actor can read in its billing entity: the rules of
 * access.ts `requireRoom` (and of the event log), as one SQL condition: organization owners/admins read every
 * room of their organization, everyone else the rooms they are a member of.
 */
function readableRooms<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, alias: string, actor: Actor): SelectQueryBuilder<T> {
  qb.innerJoin('rooms', 'r', `r."id" = ${alias}."roomId" AND r."roomType" = 0`);
  if (actor.organizationId) {
    return qb.innerJoin('memberships', 'ms', 'ms."organizationId" = r."organizationId" AND ms."userId" = :uid', { uid: actor.userId })
      .andWhere('r."organizationId" = :org', { org: actor.organizationId })
      .andWhere(`(ms."role" IN ('owner','admin') OR r."id" IN (${ROOMS_OF_USER}))`);
  }
  return qb.andWhere('r."organizationId" IS NULL').andWhere(`r."id" IN (${ROOMS_OF_USER})`, { uid: actor.userId });
}

/** `q` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
const containsPattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Newest first: later `createdAt`, then the larger id (ids of one millisecond are ordered too). */
const newerFirst = (a: SearchHit, b: SearchHit) =>
  a.item.createdAt === b.item.createdAt ? (a.item.id < b.item.id ? 1 : a.item.id > b.item.id ? -1 : 0) : a.item.createdAt < b.item.createdAt ? 1 : -1;

/**
 * Messages (body) and tasks (title, description) containing `q`, case-insensitively, in the rooms the actor
 * can read, newest first and paged. A plain `LIKE` (with `ESCAPE`, on `LOWER(…)`, the same on SQLite and
 * PostgreSQL) over the readable rooms: no index serves a substring match, so the cost grows with the rows of
 * those rooms. Keyset paging over (createdAt, id) across both tables: each page reads at most limit+1 rows of
 * each type below the cursor and merges them.
 */
export async function search(m: EntityManager, actor: Actor, input: SearchInput, secret: string): Promise<Page<SearchHit>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  let after: [string, string] | undefined;
  if (input.cursor) {
    const key = decodeCursor(secret, input.cursor, 'desc');
    try {
      const parsed = JSON.parse(key) as unknown;
      if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((v) => typeof v === 'string')) after = parsed as [string, string];
    } catch {
      /* refused below */
    }
    if (!after) throw validationError('Invalid cursor', { field: 'cursor', reason: 'not a search cursor' });
  }
  const pattern = containsPattern(input.q);
  const page = <T extends Message | Task>(qb: SelectQueryBuilder<T>, columns: string[]) => {
    readableRooms(qb, 'x', actor).andWhere(`(${columns.map((c) => `LOWER(x.${c}) LIKE :pattern ESCAPE '\\'`).join(' OR ')})`, { pattern });
    if (after) qb.andWhere('(x.createdAt < :afterAt OR (x.createdAt = :afterAt AND x.id < :afterId))', { afterAt: after[0], afterId: after[1] });
    return qb.orderBy('x.createdAt', 'DESC').addOrderBy('x.id', 'DESC').limit(limit + 1).getMany();
  };
  const hits: SearchHit[] = [];
  if (input.types.includes('messages')) {
    for (const item of await page(m.getRepository(Message).createQueryBuilder('x'), ['body'])) hits.push({ type: 'message', item });
  }
  if (input.types.includes('tasks')) {
    for (const item of await page(m.getRepository(Task).createQueryBuilder('x'), ['title', 'description'])) hits.push({ type: 'task', item });
  }
  hits.sort(newerFirst);
  const more = hits.length > limit;
  const data = hits.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: more ? encodeCursor(secret, JSON.stringify([last.item.createdAt, last.item.id]), 'desc') : null };
}
