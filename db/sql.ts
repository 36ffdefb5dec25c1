import type { DataSource, EntityManager } from 'typeorm';

export interface SqlResult<T> {
  rows: T[];
  affected: number;
}

/**
 * Runs one raw statement written with `?` placeholders and double-quoted identifiers on either database
 * (`?` becomes `$n` on PostgreSQL). For the few atomic statements the ORM cannot express
 * (conditional increments, `ON CONFLICT`, `RETURNING`). Inside a transaction, pass its manager.
 */
export async function sql<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<SqlResult<T>> {
  const ds = 'connection' in db ? db.connection : db;
  let n = 0;
  const query = isPostgres(ds) ? text.replace(/\?/g, () => `$${++n}`) : text;
  const own = 'connection' in db && db.queryRunner ? undefined : ds.createQueryRunner();
  const runner = own ?? (db as EntityManager).queryRunner!;
  try {
    const r = await runner.query(query, params, true);
    return { rows: (r.records ?? []) as T[], affected: r.affected ?? 0 };
  } finally {
    if (own) await own.release();
  }
}

export const isPostgres = (ds: DataSource): boolean => ds.options.type === 'postgres';
