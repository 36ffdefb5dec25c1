import type { DataSource } from 'typeorm';
import { sql } from '../sql.js';

// The readiness probe's two reads: that the database answers, and which migrations it records as applied.

export async function pingDatabase(ds: DataSource): Promise<void> {
  await sql(ds, 'SELECT 1 AS "ok"');
}

/** The names of the applied migrations, from TypeORM's migrations table. */
export async function appliedMigrations(ds: DataSource): Promise<Set<string>> {
  const table = ds.options.migrationsTableName ?? 'migrations';
  const { rows } = await sql<{ name: string }>(ds, `SELECT "name" FROM "${table}"`);
  return new Set(rows.map((r) => r.name));
}
