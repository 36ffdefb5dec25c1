import type { DataSource, EntityManager } from 'typeorm';
import { inDatabaseSpan } from './hooks.js';
import {
  GroupLostError,
  sqliteConnectionOf,
  sqliteGroupStatements,
  sqliteMember,
  type SqliteConnection,
} from './sqliteGroup.js';
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

/** The SQLite transaction groups of a DataSource (its one connection); see `TransactionGroups`. */
const groupsOf = new WeakMap<DataSource, TransactionGroups>();
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
 * is not better-sqlite3's: on better-sqlite3 (every runtime of this service) a group of transactions begins
 * with a real `BEGIN IMMEDIATE` (`TransactionGroups`).
 */
const TAKE_WRITE_LOCK = 'UPDATE "migrations" SET "id" = "id" WHERE 0';

const RETRY_BASE_MS = 100;
/** Most transactions one SQLite commit carries (each member's caller waits for that commit). */
const MAX_GROUP = 32;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function runHooks(s: TransactionHost, hooks: Array<() => void>): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch (err) {
      s.log.error({ err }, 'after-commit hook failed');
    }
  }
}

/** PostgreSQL (and a SQLite driver that is not better-sqlite3's): one database transaction per call. */
async function runTransaction<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const sqlite = s.ds.options.type !== 'postgres';
  for (let attempt = 0; ; attempt++) {
    try {
      const hooks: Array<() => void> = [];
      const system = sqlite ? 'sqlite' : 'postgresql';
      const result = await inDatabaseSpan(s.ds, 'db.transaction', { 'db.system.name': system }, () =>
        s.ds.transaction(async (m) => {
          if (sqlite) await m.query(TAKE_WRITE_LOCK);
          commitHooks.set(m, hooks);
          return fn(m);
        }),
      );
      runHooks(s, hooks);
      return result;
    } catch (err) {
      if (attempt >= (s.transactionRetries ?? 0) || !isTransientDatabaseError(err)) throw err;
      // rolled back whole: wait a little longer each time, then run it again
      await pause(RETRY_BASE_MS * 2 ** attempt);
    }
  }
}

interface Member {
  host: TransactionHost;
  hooks: Array<() => void>;
  done(): void;
  failed(err: unknown): void;
}

/**
 * SQLite's transactions on one better-sqlite3 connection, queued (one connection, one writer) and committed in
 * groups: a COMMIT writes every page the transaction changed, and the writes of a room rewrite the same few
 * pages, so the transactions waiting in the queue run one after the other inside one `BEGIN IMMEDIATE`, each
 * in a savepoint of its own (`sqliteMember`), and one COMMIT ends the group once the queue is empty (or
 * MAX_GROUP have run). Nothing a caller sees changes: a member that throws is rolled back to its savepoint
 * alone and its caller gets the error at once; a member that succeeded resolves, and its `afterCommit` hooks
 * run, only after the COMMIT that made it durable; if that COMMIT fails, or a member's failure ends the whole
 * transaction, every member not yet resolved gets the error and none of the group is kept. Statements from
 * outside (reads, the grouped writes of db/sql.ts) wait while a group is open. A member refused as busy at
 * `BEGIN IMMEDIATE` (another process writing) is run again up to `transactionRetries` times.
 */
class TransactionGroups {
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;
  #open: Member[] | undefined;

  constructor(
    readonly ds: DataSource,
    readonly conn: SqliteConnection,
  ) {}

  run<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
    this.#queued++;
    return new Promise<T>((resolve, reject) => {
      // (a throw outside a member's own handling, a connection closed under it, still reaches its caller)
      const turn = this.#tail.then(() => this.#member(s, fn, resolve, reject)).catch(reject);
      this.#tail = turn;
    });
  }

  async #member<T>(
    s: TransactionHost,
    fn: (m: EntityManager) => Promise<T>,
    resolve: (v: T) => void,
    reject: (e: unknown) => void,
  ) {
    this.#queued--;
    const stmts = sqliteGroupStatements(this.conn);
    for (let attempt = 0; ; attempt++) {
      const hooks: Array<() => void> = [];
      try {
        if (!this.#open) {
          stmts.begin.run();
          this.#open = [];
        }
        const result = await inDatabaseSpan(this.ds, 'db.transaction', { 'db.system.name': 'sqlite' }, () =>
          sqliteMember(this.ds, this.conn, (m) => commitHooks.set(m, hooks), fn),
        );
        this.#open.push({ host: s, hooks, done: () => resolve(result), failed: reject });
        break;
      } catch (err) {
        if (err instanceof GroupLostError) {
          this.#fail(err.errors[0]);
          reject(err.errors[0]);
          return;
        }
        const beforeBegin = !this.#open;
        if (!beforeBegin || attempt >= (s.transactionRetries ?? 0) || !isTransientDatabaseError(err)) {
          reject(err);
          break;
        }
        await pause(RETRY_BASE_MS * 2 ** attempt);
      }
    }
    if (this.#open && (this.#queued === 0 || this.#open.length >= MAX_GROUP)) this.#commit();
  }

  /** COMMITs the open group, then settles its members in order (their hooks first). */
  #commit(): void {
    try {
      sqliteGroupStatements(this.conn).commit.run();
    } catch (err) {
      // a COMMIT refused (busy) leaves the transaction open: it is rolled back, and no member is kept
      this.#fail(err);
      return;
    }
    const members = this.#open!;
    this.#open = undefined;
    for (const m of members) {
      runHooks(m.host, m.hooks);
      m.done();
    }
  }

  /** The group's transaction is lost (rolled back by SQLite, or its COMMIT refused): its waiting members fail. */
  #fail(err: unknown): void {
    const members = this.#open ?? [];
    this.#open = undefined;
    if (this.conn.inTransaction) {
      try {
        sqliteGroupStatements(this.conn).rollback.run();
      } catch {
        // the transaction is gone already
      }
    }
    for (const m of members) m.failed(err);
  }
}

/**
 * Runs `fn` in one database transaction. SQLite (better-sqlite3) has one connection and one writer: its
 * transactions are queued on their DataSource and committed in groups (`TransactionGroups`), each taking
 * the write lock at its start (`BEGIN IMMEDIATE`); PostgreSQL runs them concurrently. A transaction the
 * database refused as busy is run again up to `s.transactionRetries` times (the command line's setting;
 * the server's is 0). Hooks registered with `afterCommit` run after the commit, before the call resolves.
 */
export function inTransaction<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (s.ds.options.type === 'postgres') return runTransaction(s, fn);
  const conn = sqliteConnectionOf(s.ds);
  if (!conn) return queued(s, fn);
  let groups = groupsOf.get(s.ds);
  // (a DataSource opened again has a new connection, and a new queue with it)
  if (groups?.conn !== conn) groupsOf.set(s.ds, (groups = new TransactionGroups(s.ds, conn)));
  return groups.run(s, fn);
}

/** The queue for a SQLite driver that is not better-sqlite3's: one transaction after the other. */
const plainQueues = new WeakMap<DataSource, Promise<unknown>>();
function queued<T>(s: TransactionHost, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const run = (plainQueues.get(s.ds) ?? Promise.resolve()).then(() => runTransaction(s, fn));
  plainQueues.set(
    s.ds,
    run.catch(() => undefined),
  );
  return run;
}
