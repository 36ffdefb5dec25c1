// Mirrors typeorm@1.1.1: the connections its drivers keep on fields the API does not declare, read here and
// nowhere else: AbstractSqliteDriver's `databaseConnection` (better-sqlite3's Database, opened in `connect`)
// and PostgresDriver's `master` (the node-postgres pool made in `connect`). test/fastpaths/mirrors.test.ts
// pins the version and the code that sets them; every test that touches a database reads them through here.
import type { DataSource } from 'typeorm';
import type { DriverAccess } from '../../db/hooks.js';
import { markRunnerTransaction } from './sqliteTransaction.js';

/** The driver's own open SQLite connection (`databaseConnection`), typed by the caller; undefined on PostgreSQL. */
export function driverSqliteConnection<C>(ds: DataSource): C | undefined {
  return (ds.driver as unknown as { databaseConnection?: C }).databaseConnection;
}

/** The driver's node-postgres pool (`master`), as the caller's type of it. */
export function driverPostgresPool<P>(ds: DataSource): P {
  return (ds.driver as unknown as { master: P }).master;
}

/** What db/ is given of TypeORM's internals when the runtime opens the database (db/hooks.ts). */
export const typeormDriverAccess: DriverAccess = {
  sqliteConnection: driverSqliteConnection,
  postgresPool: driverPostgresPool,
  markTransaction: markRunnerTransaction,
};
