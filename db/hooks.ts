import type { DataSource, QueryRunner } from 'typeorm';

/**
 * What db/ needs of a TypeORM driver beyond its public API: the connections it keeps and a way to mark a query
 * runner as inside a transaction db/ began itself. The runtime passes an implementation in when it opens the
 * database (src/fastpaths/typeormDriver.ts, the one place that reads TypeORM's internals); without one, db/
 * goes through TypeORM's query runners only.
 */
export interface DriverAccess {
  /** The driver's open better-sqlite3 connection; undefined on PostgreSQL or another SQLite driver. */
  sqliteConnection(ds: DataSource): unknown;
  /** The driver's node-postgres pool. */
  postgresPool(ds: DataSource): unknown;
  /** Marks `runner` as inside (or no longer inside) a transaction, as TypeORM's `startTransaction` does. */
  markTransaction(runner: QueryRunner, open: boolean): void;
}

/** Runs `fn` in a tracing span named `name` (the observability layer's `inSpan`). */
export type SpanRunner = <T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>) => Promise<T>;

/** What the layers above give db/ when they open a database: each is optional, db/ works without it. */
export interface DatabaseHooks {
  driver?: DriverAccess;
  span?: SpanRunner;
}

const hooksOf = new WeakMap<DataSource, DatabaseHooks>();

/** Attaches `hooks` to `ds` (done by `openDatabase`, or by a test that builds its own data source). */
export function setDatabaseHooks(ds: DataSource, hooks: DatabaseHooks): void {
  hooksOf.set(ds, hooks);
}

/** The hooks given for `ds`, empty when none were. */
export function databaseHooks(ds: DataSource): DatabaseHooks {
  return hooksOf.get(ds) ?? {};
}

/** Runs `fn` in the span of `ds`'s hooks, or bare when tracing was not given. */
export function inDatabaseSpan<T>(
  ds: DataSource,
  name: string,
  attributes: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  const span = hooksOf.get(ds)?.span;
  return span ? span(name, attributes, fn) : fn();
}
