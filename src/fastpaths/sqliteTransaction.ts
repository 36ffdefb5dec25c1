// Mirrors typeorm@1.1.1: AbstractSqliteQueryRunner's startTransaction/commitTransaction/rollbackTransaction, the
// runner's `isTransactionActive` and `transactionDepth` set here as startTransaction sets them, for a transaction
// begun on better-sqlite3's connection (BetterSqlite3Driver's). test/fastpaths/mirrors.test.ts pins the version and
// the code; test/db/** and test/cli/besideServer.slow.test.ts run every transaction of the suite through it.
import type { QueryRunner } from 'typeorm';

/** What says a transaction is open on TypeORM's query runner (the flag public but read-only, the depth protected). */
interface RunnerTransactionState {
  isTransactionActive: boolean;
  transactionDepth: number;
}

/**
 * Marks `runner` as inside a transaction db/ began on the connection itself (a member of a SQLite group,
 * db/sqliteGroup.ts), as `startTransaction` marks it, so that the ORM's own `save` opens none and a nested
 * `transaction()` takes a savepoint; `open` false undoes it before the runner is released.
 */
export function markRunnerTransaction(runner: QueryRunner, open: boolean): void {
  const state = runner as unknown as RunnerTransactionState;
  state.isTransactionActive = open;
  state.transactionDepth = open ? 1 : 0;
}
