import type { EntityManager } from 'typeorm';
import type { Services } from '../domain/services.js';
import { inSpan } from '../observability/tracing.js';

let chain: Promise<unknown> = Promise.resolve();
const commitHooks = new WeakMap<EntityManager, Array<() => void>>();

/**
 * Registers `hook` to run once the transaction of `m` (opened by `inTransaction`) has committed; never
 * when it rolls back. For process-local signals only (waking the webhook worker): the hook runs
 * synchronously after COMMIT returned, so whatever it starts sees the committed rows; it must not throw
 * (errors are logged, the write stays committed). Returns false when `m` is not a transaction opened by
 * `inTransaction`: the caller then relies on its fallback (the worker polls).
 */
export function afterCommit(m: EntityManager, hook: () => void): boolean {
  const hooks = commitHooks.get(m);
  if (!hooks) return false;
  hooks.push(hook);
  return true;
}

async function runTransaction<T>(s: Services, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = [];
  const result = await inSpan('db.transaction', { 'db.system.name': s.ds.options.type === 'postgres' ? 'postgresql' : 'sqlite' }, () =>
    s.ds.transaction((m) => {
      commitHooks.set(m, hooks);
      return fn(m);
    }),
  );
  for (const hook of hooks) {
    try {
      hook();
    } catch (err) {
      s.log.error({ err }, 'after-commit hook failed');
    }
  }
  return result;
}

/**
 * Runs `fn` in one database transaction. SQLite has one connection and one writer, so its transactions
 * are queued here instead of interleaving on the shared connection; PostgreSQL runs them concurrently.
 * Hooks registered with `afterCommit` run after the commit, before the next queued SQLite transaction.
 */
export function inTransaction<T>(s: Services, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (s.ds.options.type === 'postgres') return runTransaction(s, fn);
  const run = chain.then(() => runTransaction(s, fn));
  chain = run.catch(() => undefined);
  return run;
}
