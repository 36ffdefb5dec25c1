import type { DataSource, EntityManager } from 'typeorm';
import { inSpan } from '../src/observability/tracing.js';
import { sqliteConnectionOf, sqliteTransaction } from '../src/fastpaths/sqliteTransaction.js';
import { isTransientDatabaseError } from './databaseErrors.js';

/** What a transaction needs of the runtime (the domain's `Services` has it). */
export interface TransactionHost {
  ds: DataSource;
  log: { error(obj: object, msg: string): void };
  /**
   * How often a transaction the database refused as momentarily busy is run again: 0 in the server (it
   * answers 503 and the client retries), a few in the operator command line.
   */
  transactionRetries?: number;
}

/**
 * The queue of SQLite transactions, one per DataSource (its one connection): the tail of the chain of
 * transactions queued on it. It hangs on the DataSource, not on the process, so two runtimes in one
 * process (tests, the command line) never wait on each other's queue, while every `Services` built over
 * the same DataSource (a test's copy with another clock) shares it, as it shares the connection.
 */
const queues = new WeakMap<DataSource, Promise<unknown>>();
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

/**
 * A write that changes nothing, run first in every SQLite transaction so that the transaction takes the write
 * lock at its start (TypeORM's `BEGIN` is deferred). Without it, a transaction that read first and then writes
 * while another process (the server, `svc worker`, an operator's `svc …`) has written meanwhile fails at once
 * with `database is locked` (its snapshot is stale: SQLite cannot wait for that); with it, the transaction
 * waits for the other writer through the busy timeout, as `BEGIN IMMEDIATE` would. (The table is TypeORM's
 * migration table, which every database of this service has.) Only for a SQLite driver whose connection
 * is not better-sqlite3's: on better-sqlite3 (every runtime of this service) `sqliteTransaction` begins
 * with a real `BEGIN IMMEDIATE`.
 */
const TAKE_WRITE_LOCK = 'UPDATE "migrations" SET "id" = "id" WHERE 0';

const RETRY_BASE_MS = 100;

async function runTransaction<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const sqlite = s.ds.options.type !== 'postgres';
  for (let attempt = 0; ; attempt++) {
    try {
      return await runTransactionOnce(s, fn, sqlite);
    } catch (err) {
      if (attempt >= (s.transactionRetries ?? 0) || !isTransientDatabaseError(err)) throw err;
      // rolled back whole: wait a little longer each time, then run it again
      await new Promise((r) => setTimeout(r, RETRY_BASE_MS * 2 ** attempt));
    }
  }
}

async function runTransactionOnce<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>, sqlite: boolean): Promise<T> {
  const hooks: Array<() => void> = [];
  const conn = sqlite ? sqliteConnectionOf(s.ds) : undefined;
  const result = await inSpan('db.transaction', { 'db.system.name': sqlite ? 'sqlite' : 'postgresql' }, () =>
    conn
      ? sqliteTransaction(s.ds, conn, (m) => commitHooks.set(m, hooks), fn)
      : s.ds.transaction(async (m) => {
        if (sqlite) await m.query(TAKE_WRITE_LOCK);
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
 * are queued on their DataSource instead of interleaving on the shared connection, and each takes the write
 * lock at its start (see TAKE_WRITE_LOCK); PostgreSQL runs them concurrently. A transaction the database
 * refused as busy is run again up to `s.transactionRetries` times (the command line's setting; the server's
 * is 0). Hooks registered with `afterCommit` run after the commit, before the next queued SQLite transaction.
 */
export function inTransaction<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (s.ds.options.type === 'postgres') return runTransaction(s, fn);
  const run = (queues.get(s.ds) ?? Promise.resolve()).then(() => runTransaction(s, fn));
  queues.set(s.ds, run.catch(() => undefined));
  return run;
}
