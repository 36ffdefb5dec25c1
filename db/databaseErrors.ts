/**
 * Driver codes of a database that is momentarily unable to serve, not of a failed statement: SQLite's lock
 * held by another writer past `busy_timeout`; PostgreSQL's lock timeout, serialization failure, deadlock,
 * statement timeout and connection limits. The transaction was rolled back, so the request can be retried.
 */
const TRANSIENT_DB_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  'SQLITE_LOCKED_SHAREDCACHE',
  '55P03',
  '40001',
  '40P01',
  '57014',
  '53300',
  '57P03',
]);

/** True when `err`, or anything it wraps (tRPC's `cause`, TypeORM's `driverError`), carries one of `codes`. */
function hasErrorCode(err: unknown, codes: ReadonlySet<string>): boolean {
  const seen = new Set<unknown>();
  const queue = [err];
  while (queue.length) {
    const e = queue.shift() as { code?: unknown; cause?: unknown; driverError?: unknown } | null;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (typeof e.code === 'string' && codes.has(e.code)) return true;
    queue.push(e.cause, e.driverError);
  }
  return false;
}

/** True when `err` is a transient database condition (TRANSIENT_DB_CODES): retrying may succeed. */
export const isTransientDatabaseError = (err: unknown): boolean => hasErrorCode(err, TRANSIENT_DB_CODES);

const UNSTORABLE_TEXT_CODES = new Set(['22021', '22P05']);
/**
 * PostgreSQL refusing a string it cannot store as text (a NUL character: SQLSTATE 22021, or 22P05). Input
 * checks refuse NUL before any query; this is the net behind them, so such input is a 400, never a 500.
 */
export const isUnstorableTextError = (err: unknown): boolean => hasErrorCode(err, UNSTORABLE_TEXT_CODES);
