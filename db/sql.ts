import type { DataSource, EntityManager } from 'typeorm';

export interface SqlResult<T> {
  rows: T[];
  affected: number;
}

/** The part of a better-sqlite3 connection `sql()` uses. */
interface SqliteStatement {
  reader: boolean;
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

function preparedStatement(conn: SqliteConnection, text: string): SqliteStatement {
  let cache = statementCaches.get(conn);
  if (!cache) statementCaches.set(conn, (cache = new Map()));
  let stmt = cache.get(text);
  if (!stmt) {
    stmt = conn.prepare(text);
    cache.set(text, stmt);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return stmt;
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * SQLite has one connection, and a transaction (`inTransaction`) stays open across the awaits of its
 * callback. A statement from outside it must not land inside it: it would see uncommitted rows and be
 * rolled back with it (an audit row or a unit charge lost with another request's failure). So it waits
 * until no transaction is open; the statement itself then runs synchronously, with nothing in between.
 */
async function outsideOthersTransaction(conn: SqliteConnection): Promise<void> {
  const deadline = Date.now() + MAX_WAIT_MS;
  // past the deadline it runs anyway rather than hang (a caller awaiting its own transaction by mistake)
  while (conn.inTransaction && Date.now() < deadline) await nextTick();
}

function runSqlite<T>(conn: SqliteConnection, text: string, params: unknown[]): SqlResult<T> {
  const stmt = preparedStatement(conn, text);
  const values = params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
  if (stmt.reader) {
    const rows = stmt.all(...values) as T[];
    return { rows, affected: rows.length };
  }
  return { rows: [], affected: stmt.run(...values).changes };
}

/**
 * Runs one raw statement written with `?` placeholders and double-quoted identifiers on either database
 * (`?` becomes `$n` on PostgreSQL). For the few atomic statements the ORM cannot express
 * (conditional increments, `ON CONFLICT`, `RETURNING`) and for the per-request statements of the pipeline.
 * Inside a transaction, pass its manager. On SQLite the statement is prepared once and kept (the driver's
 * own connection), and a statement outside a transaction never runs inside another caller's.
 */
export async function sql<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<SqlResult<T>> {
  const ds = 'connection' in db ? db.connection : db;
  const inOwnTransaction = 'connection' in db && !!db.queryRunner;
  if (!isPostgres(ds)) {
    const conn = (ds.driver as unknown as { databaseConnection?: SqliteConnection }).databaseConnection;
    if (conn) {
      if (!inOwnTransaction && conn.inTransaction) await outsideOthersTransaction(conn);
      return runSqlite<T>(conn, text, params);
    }
  }
  let n = 0;
  const query = isPostgres(ds) ? text.replace(/\?/g, () => `$${++n}`) : text;
  const own = inOwnTransaction ? undefined : ds.createQueryRunner();
  const runner = own ?? (db as EntityManager).queryRunner!;
  try {
    const r = await runner.query(query, params, true);
    return { rows: (r.records ?? []) as T[], affected: r.affected ?? 0 };
  } finally {
    if (own) await own.release();
  }
}

export const isPostgres = (ds: DataSource): boolean => ds.options.type === 'postgres';
