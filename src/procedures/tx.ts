import type { EntityManager } from 'typeorm';
import type { Services } from '../domain/services.js';

let chain: Promise<unknown> = Promise.resolve();

/**
 * Runs `fn` in one database transaction. SQLite has one connection and one writer, so its transactions
 * are queued here instead of interleaving on the shared connection; PostgreSQL runs them concurrently.
 */
export function inTransaction<T>(s: Services, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (s.ds.options.type === 'postgres') return s.ds.transaction(fn);
  const run = chain.then(() => s.ds.transaction(fn));
  chain = run.catch(() => undefined);
  return run;
}
