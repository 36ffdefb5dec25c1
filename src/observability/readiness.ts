import type { DataSource } from 'typeorm';
import { appliedMigrations, pingDatabase } from '../../db/stores/readiness.js';

/** Longest a readiness probe waits for the database before calling it unreachable. */
const PROBE_TIMEOUT_MS = 2000;

export type Readiness =
  { ready: true } | { ready: false; reason: 'database_unreachable' | 'migrations_unreadable' | 'migrations_pending' };

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether this process can serve (`/readyz`): the database answers `SELECT 1` within 2 s, and every
 * migration this code knows is recorded as applied (a database an older or newer deployment migrated is
 * not ready for this code). Never throws.
 */
export async function checkReadiness(ds: DataSource, timeoutMs = PROBE_TIMEOUT_MS): Promise<Readiness> {
  if (!ds.isInitialized) return { ready: false, reason: 'database_unreachable' };
  try {
    await withTimeout(pingDatabase(ds), timeoutMs);
  } catch {
    return { ready: false, reason: 'database_unreachable' };
  }
  let applied: Set<string>;
  try {
    applied = await withTimeout(appliedMigrations(ds), timeoutMs);
  } catch {
    return { ready: false, reason: 'migrations_unreadable' };
  }
  const pending = ds.migrations.some((m) => !applied.has(m.name ?? m.constructor.name));
  return pending ? { ready: false, reason: 'migrations_pending' } : { ready: true };
}
