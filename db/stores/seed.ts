import type { DataSource, EntityManager } from 'typeorm';
import { User } from '../entities/index.js';

// What the demo seed asks of a database: whether it has users yet, and (PostgreSQL) a lock that lets one of
// several processes starting together seed it.

export const hasUsers = async (db: DataSource | EntityManager): Promise<boolean> =>
  (await db.getRepository(User).count()) > 0;

/** Holds `lock` until the transaction `m` ends, on PostgreSQL; nothing on SQLite (one writer at a time). */
export async function lockForSeeding(m: EntityManager, lock: number): Promise<void> {
  if (m.connection.options.type === 'postgres') await m.query('SELECT pg_advisory_xact_lock($1)', [lock]);
}
