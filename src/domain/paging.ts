import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { hmacHex, safeEqual } from './hashing.js';
import { validationError } from './errors.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface PageInput {
  limit?: number;
  cursor?: string;
}

/** The list envelope of spec 2.3. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

const sign = (secret: string, body: string) => hmacHex(secret, `cursor:${body}`).slice(0, 22);

/** An opaque cursor: the last key seen, signed so that a forged or altered cursor is refused. */
export function encodeCursor(secret: string, key: string): string {
  const body = Buffer.from(JSON.stringify({ k: key })).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

export function decodeCursor(secret: string, cursor: string): string {
  const bad = () => validationError('Invalid cursor', { field: 'cursor', reason: 'not a cursor issued by this service' });
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined || !safeEqual(sig, sign(secret, body))) throw bad();
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { k?: unknown };
    if (typeof parsed.k !== 'string') throw bad();
    return parsed.k;
  } catch {
    throw bad();
  }
}

/**
 * Keyset pagination over a time-ordered id column (never OFFSET): rows after the cursor's key, ascending,
 * one extra row fetched to know whether another page exists. Stable under concurrent inserts.
 */
export async function keysetPage<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  keyColumn: string,
  keyOf: (row: T) => string,
  input: PageInput,
  secret: string,
): Promise<Page<T>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (input.cursor) qb.andWhere(`${keyColumn} > :afterKey`, { afterKey: decodeCursor(secret, input.cursor) });
  const rows = await qb.orderBy(keyColumn, 'ASC').limit(limit + 1).getMany();
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { data, nextCursor: more ? encodeCursor(secret, keyOf(data[data.length - 1])) : null };
}
