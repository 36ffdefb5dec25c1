import type { DataSource, EntityManager } from 'typeorm';
import { databaseHooks } from './hooks.js';

/** The part of better-sqlite3's connection a transaction uses. */
export interface SqliteConnection {
  prepare(text: string): Statement;
  readonly inTransaction: boolean;
}

interface Statement {
  run(): unknown;
}

/**
 * The open better-sqlite3 connection under TypeORM's SQLite driver, when the runtime gave db/ the driver's
 * access (db/hooks.ts) and the driver is better-sqlite3's; otherwise undefined (TypeORM's query runners then).
 */
export function sqliteConnectionOf(ds: DataSource): SqliteConnection | undefined {
  const driver = databaseHooks(ds).driver;
  if (!driver) return undefined;
  const conn = driver.sqliteConnection(ds) as Partial<SqliteConnection> | undefined;
  return conn && typeof conn.prepare === 'function' && typeof conn.inTransaction === 'boolean'
    ? (conn as SqliteConnection)
    : undefined;
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
 * Only called when `sqliteConnectionOf` found the connection, so the driver's access is there.
 */
export async function sqliteMember<T>(
  ds: DataSource,
  conn: SqliteConnection,
  opened: (m: EntityManager) => void,
  fn: (m: EntityManager) => Promise<T>,
): Promise<T> {
  const driver = databaseHooks(ds).driver!;
  const stmts = sqliteGroupStatements(conn);
  const runner = ds.createQueryRunner();
  try {
    stmts.savepoint.run();
    driver.markTransaction(runner, true);
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
    driver.markTransaction(runner, false);
    await runner.release();
  }
}
