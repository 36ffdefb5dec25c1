import type { DataSource, EntityManager } from 'typeorm';
import { databaseHooks } from './hooks.js';
import { sqliteGroupStatements } from './sqliteGroup.js';
import { endHeldRead, holdRead, holdsRead } from './sqliteHeldRead.js';

export interface SqlResult<T> {
  rows: T[];
  affected: number;
}

/** The part of a better-sqlite3 connection `sql()` uses. */
interface SqliteStatement {
  reader: boolean;
  readonly: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}
interface SqliteConnection {
  prepare(text: string): SqliteStatement;
  readonly inTransaction: boolean;
}

const STATEMENT_CACHE_SIZE = 200;
/** Longest wait for another request's transaction to end before a statement outside it runs anyway. */
const MAX_WAIT_MS = 5000;
const statementCaches = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();

/**
 * The text SQLite compiles for a `sql()` statement: each `= ?` written `= +?`. SQLite may read the value bound
 * to `column = ?` while planning and then compile the statement again whenever that parameter is bound anew,
 * which better-sqlite3 does on every run; it does not look through a unary plus, a no-op on any value that
 * leaves the comparison's affinity and the plan as they were. Only on SQLite: PostgreSQL has no unary plus
 * for text. The same kind of recompilation as the bound LIMIT below (`LIMIT_PARAM`).
 */
export const sqliteStatementText = (text: string): string => text.replace(/ = \?/g, ' = +?');

function preparedStatement(conn: SqliteConnection, text: string): SqliteStatement {
  let cache = statementCaches.get(conn);
  if (!cache) statementCaches.set(conn, (cache = new Map()));
  let stmt = cache.get(text);
  if (!stmt) {
    stmt = conn.prepare(sqliteStatementText(text));
    cache.set(text, stmt);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return stmt;
}

function runSqlite<T>(conn: SqliteConnection, stmt: SqliteStatement, params: unknown[]): SqlResult<T> {
  const values = params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
  if (stmt.reader) {
    const rows = stmt.all(...values) as T[];
    return { rows, affected: rows.length };
  }
  return { rows: [], affected: stmt.run(...values).changes };
}

/** Runs one `sql()` statement at once, synchronously: what a group's work (`sqliteGroupWork`) is given. */
export type SqlRun = <T = Record<string, unknown>>(text: string, params?: unknown[]) => SqlResult<T>;

/** One statement of a group, or a piece of work run whole at its place in the group (`sqliteGroupWork`). */
type QueuedWrite = (
  | { stmt: SqliteStatement; params: unknown[]; work?: undefined }
  | { work: (run: SqlRun) => unknown; stmt?: undefined; params?: undefined }
) & {
  resolve(r: unknown): void;
  reject(err: unknown): void;
};
interface WriteQueue {
  items: QueuedWrite[];
  since: number;
  scheduled: boolean;
}
const writeQueues = new WeakMap<SqliteConnection, WriteQueue>();

/**
 * Group commit for the statements run outside any transaction on SQLite (the pipeline's rate-limit count,
 * unit charge and audit row, among others). The writes issued during one turn of the event loop run
 * together in one `BEGIN IMMEDIATE … COMMIT` at the next turn, and each caller's promise settles only
 * after that commit: a caller still learns of its write only once it is durable, exactly as with one
 * commit per statement, while the WAL is written and synced once per group instead of once per statement.
 * A statement that fails is rolled back alone (SQLite's statement-level atomicity) and only its caller
 * sees the error; if the transaction itself is lost (a full disk, a lock held too long by another
 * process), every caller of the group sees the error and none of the group is kept.
 * A group never runs while another caller's transaction is open on the connection (it would become part
 * of it): it waits, a turn at a time, for at most MAX_WAIT_MS, then runs anyway rather than hang.
 */
function queueWrite<T>(
  conn: SqliteConnection,
  write: { stmt: SqliteStatement; params: unknown[] } | { work: (run: SqlRun) => T },
): Promise<T> {
  let q = writeQueues.get(conn);
  if (!q) writeQueues.set(conn, (q = { items: [], since: 0, scheduled: false }));
  const queue = q;
  return new Promise<T>((resolve, reject) => {
    queue.items.push({ ...write, resolve: resolve as (r: unknown) => void, reject } as QueuedWrite);
    if (!queue.scheduled) {
      queue.scheduled = true;
      queue.since = Date.now();
      setImmediate(() => flushWrites(conn, queue));
    }
  });
}

function flushWrites(conn: SqliteConnection, q: WriteQueue): void {
  endHeldRead(conn);
  if (conn.inTransaction && Date.now() - q.since < MAX_WAIT_MS) {
    setImmediate(() => flushWrites(conn, q));
    return;
  }
  const items = q.items;
  q.items = [];
  q.scheduled = false;
  // a group of its own (several statements, or a piece of work; no transaction open), on the same prepared BEGIN
  // IMMEDIATE, COMMIT and ROLLBACK as the groups of transactions (db/transaction.ts); a single statement runs alone
  const own = (items.length > 1 || items[0].work) && !conn.inTransaction ? sqliteGroupStatements(conn) : null;
  const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
  const run: SqlRun = (text, params = []) => runSqlite(conn, preparedStatement(conn, text), params);
  try {
    own?.begin.run();
    for (const item of items) {
      try {
        outcomes.push({ ok: true, value: item.work ? item.work(run) : runSqlite(conn, item.stmt, item.params) });
      } catch (error) {
        outcomes.push({ ok: false, error });
        // an error that ends the transaction (not a statement-level one) takes the whole group with it
        if (own && !conn.inTransaction) throw error;
      }
    }
    own?.commit.run();
  } catch (error) {
    if (own && conn.inTransaction) {
      try {
        own.rollback.run();
      } catch {
        // the transaction is gone already
      }
    }
    items.forEach((item) => item.reject(error));
    return;
  }
  items.forEach((item, i) => {
    const o = outcomes[i];
    if (o.ok) item.resolve(o.value);
    else item.reject(o.error);
  });
}

/**
 * Runs `work` in the next group commit of SQLite's writes (queueWrite), at its place among the turn's statements,
 * whole: its statements (`run`, synchronous) run one after the other with nothing between them, inside the group's
 * transaction, and the promise settles with what `work` returns once the group is committed. A statement of it that
 * fails throws out of `work` (its earlier statements stay, as separate statements' would); an error that ends the
 * transaction fails the whole group. Undefined where there is no such group: PostgreSQL, or a SQLite driver that
 * is not better-sqlite3's.
 */
export function sqliteGroupWork<T>(ds: DataSource, work: (run: SqlRun) => T): Promise<T> | undefined {
  const conn = groupConnection(ds);
  return conn ? queueWrite(conn, { work }) : undefined;
}

const groupConnection = (ds: DataSource): SqliteConnection | undefined =>
  isPostgres(ds) ? undefined : (databaseHooks(ds).driver?.sqliteConnection(ds) as SqliteConnection | undefined);

/** Whether `sqliteGroupWork` runs work on `ds` (an open SQLite database on better-sqlite3's own connection). */
export const runsGroupWork = (ds: DataSource): boolean => groupConnection(ds) !== undefined;

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * SQLite has one connection, and a transaction (`inTransaction`) stays open across the awaits of its
 * callback. A statement from outside it must not land inside it: it would see uncommitted rows and be
 * rolled back with it (an audit row or a unit charge lost with another request's failure). So a read
 * waits until no transaction is open (the turn's held read is not one: sqliteHeldRead.ts), then runs
 * synchronously, with nothing in between; writes are grouped (queueWrite).
 */
async function outsideOthersTransaction(conn: SqliteConnection): Promise<void> {
  const deadline = Date.now() + MAX_WAIT_MS;
  // past the deadline it runs anyway rather than hang (a caller awaiting its own transaction by mistake)
  while (conn.inTransaction && !holdsRead(conn) && Date.now() < deadline) await nextTick();
}

/**
 * Runs one raw statement written with `?` placeholders and double-quoted identifiers on either database
 * (`?` becomes `$n` on PostgreSQL). For the few atomic statements the ORM cannot express
 * (conditional increments, `ON CONFLICT`, `RETURNING`) and for the per-request statements of the pipeline.
 * Inside a transaction, pass its manager. On SQLite the statement is prepared once and kept (the driver's
 * own connection), and a statement outside a transaction never runs inside another caller's; on PostgreSQL
 * it is a named prepared statement, parsed once per pooled connection (`runPostgres`).
 */
export async function sql<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<SqlResult<T>> {
  const ds = 'connection' in db ? db.connection : db;
  const inOwnTransaction = 'connection' in db && !!db.queryRunner;
  if (isPostgres(ds))
    return runPostgres<T>(ds, inOwnTransaction ? (db as EntityManager).queryRunner! : null, text, params);
  const conn = databaseHooks(ds).driver?.sqliteConnection(ds) as SqliteConnection | undefined;
  if (conn) {
    const stmt = preparedStatement(conn, text);
    if (inOwnTransaction) return runSqlite<T>(conn, stmt, params);
    if (!stmt.readonly) return queueWrite(conn, { stmt, params }) as Promise<SqlResult<T>>;
    if (conn.inTransaction && !holdsRead(conn)) await outsideOthersTransaction(conn);
    // the turn's reads share one read transaction (sqliteHeldRead.ts)
    holdRead(conn);
    return runSqlite<T>(conn, stmt, params);
  }
  // a SQLite driver that is not better-sqlite3's: TypeORM's query runner
  const own = inOwnTransaction ? undefined : ds.createQueryRunner();
  const runner = own ?? (db as EntityManager).queryRunner!;
  try {
    const r = await runner.query(text, params, true);
    return { rows: (r.records ?? []) as T[], affected: r.affected ?? 0 };
  } finally {
    if (own) await own.release();
  }
}

export const isPostgres = (ds: DataSource): boolean => ds.options.type === 'postgres';

/** The part of a node-postgres client or pool `sql()` uses: a query by config, named or not. */
interface PgQueryable {
  query(q: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** Most statement texts given a name (a prepared statement kept on every pooled connection); any beyond run unnamed. */
const PG_NAMED_STATEMENTS = 500;
const pgStatements = new Map<string, { name?: string; text: string }>();

/**
 * The PostgreSQL form of a `sql()` text (`?` become `$1`, `$2` …) and, for the first PG_NAMED_STATEMENTS texts
 * seen, a statement name: node-postgres prepares a named statement once per connection and then only binds and
 * executes it, where an unnamed one is parsed and planned on every run. The texts are the code's own (values are
 * always parameters), so the set is small; the cap only bounds what a connection keeps.
 */
function pgStatement(text: string): { name?: string; text: string } {
  let st = pgStatements.get(text);
  if (!st) {
    let n = 0;
    const pgText = text.replace(/\?/g, () => `$${++n}`);
    st =
      pgStatements.size < PG_NAMED_STATEMENTS
        ? { name: `svc_${pgStatements.size + 1}`, text: pgText }
        : { text: pgText };
    pgStatements.set(text, st);
  }
  return st;
}

/**
 * A `sql()` statement on PostgreSQL, straight on node-postgres: on the transaction's own connection (`runner`),
 * or on any connection of the pool. Not through TypeORM's `QueryRunner.query`, which takes only a text (so
 * no named statement) and broadcasts two query events to subscribers this service does not have. Errors are
 * node-postgres' own (`code` is the SQLSTATE, what db/databaseErrors.ts reads).
 */
async function runPostgres<T>(
  ds: DataSource,
  runner: { connect(): Promise<unknown> } | null,
  text: string,
  params: unknown[],
): Promise<SqlResult<T>> {
  const st = pgStatement(text);
  const pool = runner ? undefined : (databaseHooks(ds).driver?.postgresPool(ds) as PgQueryable | undefined);
  // without the driver's pool (no access given), a connection of TypeORM's own for the one statement
  const own = runner || pool ? undefined : ds.createQueryRunner();
  try {
    const on = (pool ?? (await (runner ?? own!).connect())) as PgQueryable;
    const r = await on.query({ ...st, values: params });
    return { rows: r.rows as T[], affected: r.rowCount ?? 0 };
  } finally {
    if (own) await own.release();
  }
}

/**
 * `LIMIT` with its count as a parameter, for `sql()` statements. Not a bare `LIMIT ?`: SQLite may read a bound
 * LIMIT while planning and then compile the statement again whenever it is bound anew, which better-sqlite3
 * does on every run. The cast is an expression SQLite does not read while planning; the plans are unchanged.
 * eslint.config.js refuses a bare `LIMIT ?` in the server code.
 */
export const LIMIT_PARAM = 'LIMIT CAST(? AS INTEGER)';
