// Mirrors typeorm@1.1.1: AbstractSqliteQueryRunner's startTransaction/commitTransaction/rollbackTransaction (the
// query runner's `isTransactionActive` and `transactionDepth`, set here as startTransaction sets them) and
// BetterSqlite3Driver's `databaseConnection`. test/fastpaths/mirrors.test.ts pins the version and the code;
// test/db/** and test/cli/besideServer.test.ts run every transaction of the suite through it.
import type { DataSource, EntityManager } from 'typeorm';

/** The part of better-sqlite3's connection a transaction uses. */
export interface SqliteConnection {
  prepare(text: string): { run(): unknown };
  readonly inTransaction: boolean;
}

/** The open better-sqlite3 connection under TypeORM's SQLite driver, if it is that driver. */
export function sqliteConnectionOf(ds: DataSource): SqliteConnection | undefined {
  const conn = (ds.driver as unknown as { databaseConnection?: Partial<SqliteConnection> }).databaseConnection;
  return conn && typeof conn.prepare === 'function' && typeof conn.inTransaction === 'boolean' ? (conn as SqliteConnection) : undefined;
}

/** The state of TypeORM's query runner that says a transaction is open on it (public on the runner, the depth protected). */
interface RunnerTransactionState {
  isTransactionActive: boolean;
  transactionDepth: number;
}

const transactionStatements = new WeakMap<SqliteConnection, { begin: { run(): unknown }; commit: { run(): unknown }; rollback: { run(): unknown } }>();

/**
 * A SQLite transaction begun and ended on the driver's own better-sqlite3 connection (`BEGIN IMMEDIATE`,
 * `COMMIT`, `ROLLBACK` as prepared statements), not through TypeORM's `transaction()`, whose query runner
 * sends each of them through its logger and broadcaster and cannot choose the mode (so it needed
 * TAKE_WRITE_LOCK as a fourth statement). `BEGIN IMMEDIATE` takes the write lock at the start, waiting for
 * another process's writer through the busy timeout, as TAKE_WRITE_LOCK did. The callback still gets an
 * `EntityManager` on a query runner of the same connection, marked as in a transaction (so the ORM's own
 * `save` opens none, and a nested `transaction()` uses a savepoint, as in TypeORM's): whatever it runs, by
 * the ORM or by `sql()`, runs inside this transaction.
 */
export async function sqliteTransaction<T>(
  ds: DataSource, conn: SqliteConnection, opened: (m: EntityManager) => void, fn: (m: EntityManager) => Promise<T>,
): Promise<T> {
  let stmts = transactionStatements.get(conn);
  if (!stmts) {
    stmts = { begin: conn.prepare('BEGIN IMMEDIATE'), commit: conn.prepare('COMMIT'), rollback: conn.prepare('ROLLBACK') };
    transactionStatements.set(conn, stmts);
  }
  const runner = ds.createQueryRunner();
  const state = runner as unknown as RunnerTransactionState;
  try {
    stmts.begin.run();
    state.isTransactionActive = true;
    state.transactionDepth = 1;
    const m = runner.manager;
    opened(m);
    try {
      const result = await fn(m);
      stmts.commit.run();
      return result;
    } catch (err) {
      // an error that ended the transaction already (SQLite rolls back on some) leaves nothing to roll back;
      // a COMMIT refused as busy leaves it open, and it is rolled back here like any failure
      if (conn.inTransaction) {
        try {
          stmts.rollback.run();
        } catch (rollbackErr) {
          throw new AggregateError([err, rollbackErr], 'a SQLite transaction could not be rolled back');
        }
      }
      throw err;
    }
  } finally {
    state.isTransactionActive = false;
    state.transactionDepth = 0;
    await runner.release();
  }
}
