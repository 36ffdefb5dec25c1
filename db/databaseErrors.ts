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

/**
 * Codes of a database that is not there right now: the connection refused, reset, cut or timed out (Node's
 * socket errors), PostgreSQL shutting down or restarting (57P01 admin shutdown, 57P02 crash shutdown, 57P03
 * cannot connect now) and every connection exception (class 08).
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
]);
const CONNECTION_EXCEPTION_CLASS = '08';
/**
 * What node-postgres (and TypeORM above it) throws, with no code, when its connection ends under a query or the
 * pool has none to give.
 */
const UNREACHABLE_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error/,
  /^timeout exceeded when trying to connect/,
  /^Client was closed and is not queryable/,
  // TypeORM's, when the connection of a transaction ended under it (its query runner is released on the error)
  /^Query runner already released/,
];

function isUnreachable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue = [err];
  while (queue.length) {
    const e = queue.shift() as { code?: unknown; message?: unknown; cause?: unknown; driverError?: unknown } | null;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (typeof e.code === 'string' && (UNREACHABLE_CODES.has(e.code) || e.code.startsWith(CONNECTION_EXCEPTION_CLASS)))
      return true;
    if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.some((m) => m.test(e.message as string))) return true;
    queue.push(e.cause, e.driverError);
  }
  return false;
}

/**
 * True when `err` says the database cannot serve right now: busy (`isTransientDatabaseError`) or out of reach
 * (a lost or refused connection, a server shutting down or restarting). The request is answered 503 with
 * `Retry-After`; a write with an Idempotency-Key is safe to retry, since its key and its write commit together.
 */
export const isDatabaseUnavailableError = (err: unknown): boolean =>
  isTransientDatabaseError(err) || isUnreachable(err);

const UNSTORABLE_TEXT_CODES = new Set(['22021', '22P05']);
/**
 * PostgreSQL refusing a string it cannot store as text (a NUL character: SQLSTATE 22021, or 22P05). Input
 * checks refuse NUL before any query; this is the net behind them, so such input is a 400, never a 500.
 */
export const isUnstorableTextError = (err: unknown): boolean => hasErrorCode(err, UNSTORABLE_TEXT_CODES);
