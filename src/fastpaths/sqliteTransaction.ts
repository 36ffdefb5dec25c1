// Mirrors typeorm@1.1.1: AbstractSqliteQueryRunner's startTransaction/commitTransaction/rollbackTransaction (the
// query runner's `isTransactionActive` and `transactionDepth`, set here as startTransaction sets them) and
// BetterSqlite3Driver's `databaseConnection`. test/fastpaths/mirrors.test.ts pins the version and the code;
// test/db/** and test/cli/besideServer.test.ts run every transaction of the suite through it.
import type { DataSource, EntityManager } from 'typeorm';
import { driverSqliteConnection } from './typeormDriver.js';

/** The part of better-sqlite3's connection a transaction uses. */
export interface SqliteConnection {
  prepare(text: string): Statement;
  readonly inTransaction: boolean;
}

/** The open better-sqlite3 connection under TypeORM's SQLite driver, if it is that driver. */
export function sqliteConnectionOf(ds: DataSource): SqliteConnection | undefined {
  const conn = driverSqliteConnection<Partial<SqliteConnection>>(ds);
  return conn && typeof conn.prepare === 'function' && typeof conn.inTransaction === 'boolean'
    ? (conn as SqliteConnection)
    : undefined;
}

/** The state of TypeORM's query runner that says a transaction is open on it (public on the runner, the depth protected). */
interface RunnerTransactionState {
  isTransactionActive: boolean;
  transactionDepth: number;
}

interface Statement {
  run(): unknown;
}

/** The statements of a group of transactions (db/transaction.ts): the group's own, and each member's savepoint. */
export interface GroupStatements {
  begin: Statement;
  commit: Statement;
  rollback: Statement;
  savepoint: Statement;
  release: Statement;
  rollbackTo: Statement;
}

const groupStatements = new WeakMap<SqliteConnection, GroupStatements>();

/** `BEGIN IMMEDIATE`, `COMMIT`, `ROLLBACK` and a member's savepoint, prepared once per connection. */
export function sqliteGroupStatements(conn: SqliteConnection): GroupStatements {
  let stmts = groupStatements.get(conn);
  if (!stmts) {
    stmts = {
      begin: conn.prepare('BEGIN IMMEDIATE'),
      commit: conn.prepare('COMMIT'),
      rollback: conn.prepare('ROLLBACK'),
      savepoint: conn.prepare('SAVEPOINT "svc_member"'),
      release: conn.prepare('RELEASE "svc_member"'),
      rollbackTo: conn.prepare('ROLLBACK TO "svc_member"'),
    };
    groupStatements.set(conn, stmts);
  }
  return stmts;
}

/** The member's transaction ended the whole SQLite transaction (a full disk, an I/O error): the group is lost. */
export class GroupLostError extends AggregateError {}

/**
 * One transaction of a group (db/transaction.ts), begun and ended on the driver's own better-sqlite3
 * connection inside the group's `BEGIN IMMEDIATE` as a savepoint: `SAVEPOINT`, then `RELEASE` when `fn`
 * succeeds, or `ROLLBACK TO` (and `RELEASE`) when it throws, which undoes this member's writes and nothing
 * else. The callback gets an `EntityManager` on a query runner of the same connection, marked as in a
 * transaction as TypeORM's `startTransaction` marks it (so the ORM's own `save` opens none, and a nested
 * `transaction()` takes a savepoint of its own, as in TypeORM's): whatever it runs, by the ORM or by
 * `sql()`, runs inside this member. Not TypeORM's `transaction()`, whose query runner sends each statement
 * through its logger and broadcaster and cannot choose the mode. If SQLite ended the whole transaction
 * while `fn` failed, the error is a `GroupLostError` (the group's other members are lost with it).
 */
export async function sqliteMember<T>(
  ds: DataSource,
  conn: SqliteConnection,
  opened: (m: EntityManager) => void,
  fn: (m: EntityManager) => Promise<T>,
): Promise<T> {
  const stmts = sqliteGroupStatements(conn);
  const runner = ds.createQueryRunner();
  const state = runner as unknown as RunnerTransactionState;
  try {
    stmts.savepoint.run();
    state.isTransactionActive = true;
    state.transactionDepth = 1;
    const m = runner.manager;
    opened(m);
    try {
      const result = await fn(m);
      stmts.release.run();
      return result;
    } catch (err) {
      if (!conn.inTransaction) throw new GroupLostError([err], 'the SQLite transaction was rolled back whole');
      try {
        stmts.rollbackTo.run();
        stmts.release.run();
      } catch (rollbackErr) {
        throw new GroupLostError([err, rollbackErr], 'a SQLite savepoint could not be rolled back');
      }
      throw err;
    }
  } finally {
    state.isTransactionActive = false;
    state.transactionDepth = 0;
    await runner.release();
  }
}
