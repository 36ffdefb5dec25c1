import type { EntityManager } from 'typeorm';
import { LIMIT_PARAM, sql } from '../sql.js';

/**
 * A table's column list, written once: the SELECT list (bare or behind an alias), the INSERT of a whole row and
 * that row's values in the same order. The stores that write a table through `sql()` build every statement of
 * it from this (a column added to the entity is added here, once).
 */
export interface TableColumns<T> {
  readonly table: string;
  readonly names: readonly (keyof T & string)[];
  /** `"a", "b"`, or `x."a", x."b"` behind the alias `x`. */
  list(alias?: string): string;
  /** `INSERT INTO "<table>" (<every column>) VALUES (?, …)`. */
  readonly insert: string;
  /** The values of `row` for `insert`, in the order of the column list. */
  values(row: T): unknown[];
}

export function tableColumns<T>(table: string, names: readonly (keyof T & string)[]): TableColumns<T> {
  const lists = new Map<string, string>();
  const list = (alias = '') => {
    let text = lists.get(alias);
    if (text === undefined) {
      text = names.map((n) => (alias ? `${alias}."${n}"` : `"${n}"`)).join(', ');
      lists.set(alias, text);
    }
    return text;
  };
  return {
    table,
    names,
    list,
    insert: `INSERT INTO "${table}" (${list()}) VALUES (${names.map(() => '?').join(', ')})`,
    values: (row) => names.map((n) => row[n]),
  };
}

/** `value` as a LIKE prefix pattern (ESCAPE '\'): `%`, `_` and `\` typed by a caller match themselves. */
export const likePrefix = (value: string): string => `${escapeLike(value)}%`;

/** `value` as a LIKE pattern matching it anywhere, lower-cased, its own `%`, `_` and `\` taken literally. */
export const likeContains = (value: string): string => `%${escapeLike(value.toLowerCase())}%`;

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `?, ?, …`: one placeholder per value, for an `IN (…)` list. */
export const placeholders = (values: readonly unknown[]): string => values.map(() => '?').join(', ');

/** Ids and names of a room's rows of `table` whose `name` column or id starts with `prefix`, by name. */
export async function namedByPrefix(
  m: EntityManager,
  table: 'records' | 'files',
  nameColumn: 'title' | 'filename',
  roomId: string,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  const pattern = likePrefix(prefix);
  const rows = await sql<{ id: string; name: string }>(
    m,
    `SELECT x."id", x."${nameColumn}" AS "name" FROM "${table}" x WHERE x."roomId" = ? AND (LOWER(x."${nameColumn}") LIKE ? ESCAPE '\\' OR x."id" LIKE ? ESCAPE '\\') ` +
      `ORDER BY LOWER(x."${nameColumn}"), x."id" ${LIMIT_PARAM}`,
    [roomId, pattern.toLowerCase(), pattern, limit],
  );
  return rows.rows;
}
