import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** What one keyset page reads: rows after `after` (when given) in `order` of the key, `limit` of them at most. */
export interface KeysetBounds {
  order: 'asc' | 'desc';
  after?: string;
  limit: number;
}

/**
 * Keyset pagination over a time-ordered id column (never OFFSET) on a query builder: the rows after the key in
 * the page's order, `limit` of them (the caller asks one more than it shows, to know whether more exist).
 */
export function keysetRows<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  keyColumn: string,
  b: KeysetBounds,
): Promise<T[]> {
  if (b.after !== undefined)
    qb.andWhere(`${keyColumn} ${b.order === 'desc' ? '<' : '>'} :afterKey`, { afterKey: b.after });
  return qb
    .orderBy(keyColumn, b.order === 'desc' ? 'DESC' : 'ASC')
    .limit(b.limit)
    .getMany();
}
