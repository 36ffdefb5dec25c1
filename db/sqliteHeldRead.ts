// One read transaction shared by the reads of a turn of the event loop, on better-sqlite3's one connection.
//
// In WAL mode a statement run outside a transaction begins and ends a read transaction of its own (the WAL
// index read, a read mark taken and dropped), which costs more than a small indexed read itself. The
// per-request reads of `sql()` (the credential, a room's access, a page) therefore run inside one `BEGIN …
// COMMIT` held from the first of them until the loop's next check phase: the requests parsed in one poll phase,
// and the continuations of one group commit, share it. Nothing else changes for anyone:
// - it only ever holds reads: every statement that is not a plain read (a write, `BEGIN`, `SAVEPOINT`, a pragma,
//   `exec`) ends it first, so a write still runs and commits exactly as before, and a transaction still begins
//   on a connection with no transaction open;
// - its snapshot is at most one turn old: another process's commit is seen from the next turn on, as if those
//   reads had been made a moment earlier; this process's own writes end it, so they are always seen;
// - it never starts inside another caller's transaction (`sql()` waits for that, as it always has).

/** The statement methods that run it (better-sqlite3's `Statement`). */
const RUNS = ['run', 'get', 'all', 'iterate'] as const;
/** The connection methods that run SQL without a statement of their own. */
const CONNECTION_RUNS = ['exec', 'pragma', 'backup', 'serialize', 'close'] as const;

interface Statement {
  readonly reader: boolean;
  readonly readonly: boolean;
  run(...params: unknown[]): unknown;
}
interface Connection {
  prepare(text: string, ...rest: unknown[]): Statement;
  readonly inTransaction: boolean;
}

interface HeldRead {
  open: boolean;
  begin: Statement;
  commit: Statement;
  rollback: Statement;
}

const heldReads = new WeakMap<object, HeldRead>();

/** Whether `conn`'s open transaction, if any, is the held read (ours to join), not another caller's. */
export const holdsRead = (conn: object): boolean => heldReads.get(conn)?.open === true;

/**
 * Makes `conn` end its held read before anything but a plain read runs on it: called once, when the connection
 * is opened (db/dataSource.ts), before any statement is prepared on it.
 */
export function guardHeldReads(conn: Connection): void {
  const prepare = conn.prepare.bind(conn);
  const state: HeldRead = {
    open: false,
    begin: prepare('BEGIN'),
    commit: prepare('COMMIT'),
    rollback: prepare('ROLLBACK'),
  };
  heldReads.set(conn, state);
  const guarded = <F extends (...args: never[]) => unknown>(f: F): F =>
    function (this: unknown, ...args: Parameters<F>) {
      if (state.open) endHeldRead(conn);
      return f.apply(this, args);
    } as F;
  const methods = conn as unknown as Record<string, (...args: never[]) => unknown>;
  for (const m of CONNECTION_RUNS) if (typeof methods[m] === 'function') methods[m] = guarded(methods[m]);
  conn.prepare = (text: string, ...rest: unknown[]) => {
    const stmt = prepare(text, ...rest);
    if (stmt.reader && stmt.readonly) return stmt;
    const runs = stmt as unknown as Record<string, (...args: never[]) => unknown>;
    for (const m of RUNS) if (typeof runs[m] === 'function') runs[m] = guarded(runs[m]);
    return stmt;
  };
}

/**
 * Begins the held read on `conn` if none is open and no other transaction is: the read about to run joins it.
 * It ends at the loop's next check phase, or before anything else runs on the connection.
 */
export function holdRead(conn: Connection): void {
  const state = heldReads.get(conn);
  if (!state || state.open || conn.inTransaction) return;
  state.begin.run();
  state.open = true;
  setImmediate(() => endHeldRead(conn));
}

/** Ends the held read of `conn`, if one is open (a read-only transaction: its COMMIT writes nothing). */
export function endHeldRead(conn: object): void {
  const state = heldReads.get(conn);
  if (!state?.open) return;
  state.open = false;
  if (!(conn as Connection).inTransaction) return;
  try {
    state.commit.run();
  } catch {
    try {
      state.rollback.run();
    } catch {
      // the transaction is gone already
    }
  }
}
