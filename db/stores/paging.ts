import type { DataSource, EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { LIMIT_PARAM, sql } from '../sql.js';

/**
 * One page of a keyset listing, as the domain asks for it (src/domain/paging.ts reads the cursor): at most
 * `limit` rows after the key `after` in the page's order. A store reads `limit + 1` rows, the extra one telling
 * the domain whether another page exists.
 */
export interface KeysetBounds {
  limit: number;
  order: 'asc' | 'desc';
  /** The key the page starts after (from the cursor); none: the first page. */
  after?: string;
}

/** A listing as one raw statement: `SELECT … FROM … WHERE …` (with `?` parameters), and its key column. */
export interface RawListQuery {
  /** `SELECT <columns> FROM <table> WHERE <conditions>`: conditions always present (`1 = 1` when none). */
  select: string;
  params: unknown[];
  /** The quoted key column (`"id"`, `x."id"`): time-ordered, unique. */
  key: string;
}

/**
 * Keyset pagination as one raw statement (db/sql.ts: on SQLite a cached prepared statement, no query builder
 * and no entity hydration), never OFFSET: stable under concurrent inserts. Returns up to `limit + 1` rows.
 */
export async function keysetRows<T>(db: DataSource | EntityManager, q: RawListQuery, b: KeysetBounds): Promise<T[]> {
  let text = q.select;
  const params = [...q.params];
  if (b.after !== undefined) {
    text += ` AND ${q.key} ${b.order === 'desc' ? '<' : '>'} ?`;
    params.push(b.after);
  }
  text += ` ORDER BY ${q.key} ${b.order === 'desc' ? 'DESC' : 'ASC'} ${LIMIT_PARAM}`;
  params.push(b.limit + 1);
  return (await sql<T>(db, text, params)).rows;
}

/** `keysetRows` on a TypeORM query builder (entities hydrated): the same rows in the same order. */
export async function keysetEntities<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  keyColumn: string,
  b: KeysetBounds,
): Promise<T[]> {
  if (b.after !== undefined)
    qb.andWhere(`${keyColumn} ${b.order === 'desc' ? '<' : '>'} :afterKey`, { afterKey: b.after });
  return qb
    .orderBy(keyColumn, b.order === 'desc' ? 'DESC' : 'ASC')
    .limit(b.limit + 1)
    .getMany();
}
