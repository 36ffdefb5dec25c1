import type { KeysetBounds } from '../../db/stores/keysetQuery.js';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, type Page, type PageInput } from '../domain/paging.js';

// A keyset page of a store's rows (webhooks, agent runs, connectors): the cursor is read here, the store reads
// one row more than the page shows, and the extra row says whether another page exists.

/** What a page request asks of the store: its order, the key it starts after (from the cursor), one extra row. */
export function keysetBounds(input: PageInput, secret: string): KeysetBounds & { shown: number } {
  const order = input.order ?? 'asc';
  const shown = input.limit ?? DEFAULT_LIMIT;
  return {
    order,
    after: input.cursor ? decodeCursor(secret, input.cursor, order) : undefined,
    limit: shown + 1,
    shown,
  };
}

/** The page of the rows read: `shown` of them, and a cursor when the extra row says more exist. */
export function keysetPageOf<T>(
  rows: T[],
  b: ReturnType<typeof keysetBounds>,
  keyOf: (row: T) => string,
  secret: string,
): Page<T> {
  const more = rows.length > b.shown;
  const data = more ? rows.slice(0, b.shown) : rows;
  return { data, nextCursor: more ? encodeCursor(secret, keyOf(data[data.length - 1]), b.order) : null };
}

/** Reads a keyset page through `read` (a store function given the bounds). */
export async function readKeysetPage<T>(
  input: PageInput,
  secret: string,
  read: (b: KeysetBounds) => Promise<T[]>,
  keyOf: (row: T) => string,
): Promise<Page<T>> {
  const b = keysetBounds(input, secret);
  return keysetPageOf(await read(b), b, keyOf, secret);
}
