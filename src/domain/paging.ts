import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { keysetEntities, type KeysetBounds } from '../../db/stores/paging.js';
import { hmacHex, safeEqual } from './hashing.js';
import { validationError } from './errors.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export type SortOrder = 'asc' | 'desc';

export interface PageInput {
  limit?: number;
  cursor?: string;
  /**
   * Ascending (oldest first, the default) or descending key order; a cursor only continues the order it was issued in.
   */
  order?: SortOrder;
}

/** The list envelope (docs/rest-api.md#lists-and-search). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

const sign = (secret: string, body: string) => hmacHex(secret, `cursor:${body}`).slice(0, 22);

/**
 * An opaque cursor: the last key seen (and, for a descending page, the order), signed so that a forged or
 * altered cursor is refused. Ascending cursors keep their old form, so cursors issued before `order` existed stay
 * valid.
 */
export function encodeCursor(secret: string, key: string, order: SortOrder = 'asc'): string {
  const body = Buffer.from(JSON.stringify(order === 'desc' ? { k: key, o: 'desc' } : { k: key })).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

/** The key of a cursor issued by `encodeCursor` for the same `order`; anything else is a 400. */
export function decodeCursor(secret: string, cursor: string, order: SortOrder = 'asc'): string {
  const bad = () =>
    validationError('Invalid cursor', { field: 'cursor', reason: 'not a cursor issued by this service' });
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined || !safeEqual(sig, sign(secret, body))) throw bad();
  let parsed: { k?: unknown; o?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { k?: unknown; o?: unknown };
  } catch {
    throw bad();
  }
  if (typeof parsed.k !== 'string') throw bad();
  if ((parsed.o ?? 'asc') !== order) {
    throw validationError('This cursor continues a list in the other order', {
      field: 'cursor',
      reason: `issued for order=${String(parsed.o ?? 'asc')}`,
    });
  }
  return parsed.k;
}

/**
 * Keyset pagination over a time-ordered id column (never OFFSET): rows after the cursor's key in the page's
 * order (ascending unless `order: 'desc'`), one extra row fetched to know whether another page exists.
 * Stable under concurrent inserts. `fetch` is the store's read of `limit + 1` rows within the bounds.
 */
export async function readPage<T>(
  input: PageInput,
  secret: string,
  keyOf: (row: T) => string,
  fetch: (bounds: KeysetBounds) => Promise<T[]>,
): Promise<Page<T>> {
  const bounds = pageBounds(input, secret);
  return pageOf(await fetch(bounds), bounds.limit, bounds.order, keyOf, secret);
}

/** `readPage` over a TypeORM query builder a store made (db/stores/paging.ts `keysetEntities`). */
export async function keysetPage<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  keyColumn: string,
  keyOf: (row: T) => string,
  input: PageInput,
  secret: string,
): Promise<Page<T>> {
  return readPage(input, secret, keyOf, (bounds) => keysetEntities(qb, keyColumn, bounds));
}

/** What a page request asks: its size, its order and the key it starts after (from the cursor). */
export function pageBounds(input: PageInput, secret: string): KeysetBounds & { order: SortOrder } {
  const order = input.order ?? 'asc';
  return {
    limit: input.limit ?? DEFAULT_LIMIT,
    order,
    after: input.cursor ? decodeCursor(secret, input.cursor, order) : undefined,
  };
}

/** The page of `limit + 1` rows fetched: `limit` of them, and a cursor when the extra row says more exist. */
function pageOf<T>(rows: T[], limit: number, order: SortOrder, keyOf: (row: T) => string, secret: string): Page<T> {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { data, nextCursor: more ? encodeCursor(secret, keyOf(data[data.length - 1]), order) : null };
}
