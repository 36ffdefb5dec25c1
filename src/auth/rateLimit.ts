import { RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { isPostgres, sql } from '../../db/sql.js';

export const RATE_WINDOW_SECONDS = 60;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** A condition a later statement can carry (`… WHERE <sql>`), with its parameters. */
export interface SqlCondition {
  sql: string;
  params: unknown[];
}

export interface RateLimiter {
  /** Counts one request for `subject` against `limit` per 60 s window. */
  consume(subject: string, limit: number): Promise<RateLimitResult>;
  /**
   * "The window `consume(subject, limit)` has just counted still allows the request", as a condition for a
   * statement queued right after that `consume`, in the same turn. Only where that statement is sure to run
   * after the count and see it: on SQLite, whose writes of one turn run in order in one transaction
   * (db/sql.ts). Absent on PostgreSQL, where statements run on pooled connections in no set order.
   */
  allowedAfterConsume?(subject: string, limit: number): SqlCondition;
}

/**
 * The short-window rate limit (spec 5.5 condition 5), stored in the service's own database: on PostgreSQL
 * rate-limiter-flexible's RateLimiterPostgres (several processes share one count); on SQLite the same
 * table, keys and single upsert as the library's RateLimiterSQLite, run as one prepared statement (the
 * library prepares it again and wraps it in a transaction on every request, a tenth of a request's CPU).
 */
export function createRateLimiter(ds: DataSource): RateLimiter {
  if (!isPostgres(ds)) return createSqliteRateLimiter(ds);
  const limiters = new Map<number, Promise<RateLimiterAbstract>>();
  const driver = ds.driver as unknown as { databaseConnection?: unknown; master?: unknown };
  const make = (points: number) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const common = { points, duration: RATE_WINDOW_SECONDS, keyPrefix: `rl${points}`, tableName: 'rate_limits', tableCreated: true };
      // the library may call back synchronously, inside its constructor: settle after it returns
      const done = (err?: unknown) => queueMicrotask(() => (err ? reject(err) : resolve(limiter)));
      const limiter: RateLimiterAbstract = new RateLimiterPostgres(
        { ...common, storeClient: driver.master, storeType: 'pool', clearExpiredByTimeout: false },
        done,
      );
    });
  return {
    async consume(subject, limit) {
      if (!limiters.has(limit)) limiters.set(limit, make(limit));
      const limiter = await limiters.get(limit)!;
      try {
        const r = await limiter.consume(subject, 1);
        return { allowed: true, limit, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)) };
      }
    },
  };
}

/**
 * RateLimiterSQLite's upsert (rate-limiter-flexible 11): a window starts with the first request and
 * counts until `expire`; a request after it starts a new one. One statement, so it is atomic by itself.
 */
const SQLITE_UPSERT =
  'INSERT INTO "rate_limits" ("key", "points", "expire") VALUES (?, ?, ?) ON CONFLICT("key") DO UPDATE SET ' +
  '"points" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "points" + excluded."points" ELSE excluded."points" END, ' +
  '"expire" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "expire" ELSE excluded."expire" END ' +
  'RETURNING "points", "expire"';

/** The library's key: `<keyPrefix>:<subject>`, keyPrefix `rl<points>` as above. */
const storeKey = (subject: string, limit: number) => `rl${limit}:${subject}`;

/** The window's count after an upsert: within the limit. */
const SQLITE_WITHIN_LIMIT = '(SELECT "points" FROM "rate_limits" WHERE "key" = ?) <= ?';

function createSqliteRateLimiter(ds: DataSource): RateLimiter {
  return {
    allowedAfterConsume: (subject, limit) => ({ sql: SQLITE_WITHIN_LIMIT, params: [storeKey(subject, limit), limit] }),
    async consume(subject, limit) {
      const now = Date.now();
      const r = await sql<{ points: number; expire: number | null }>(ds, SQLITE_UPSERT, [
        storeKey(subject, limit), 1, now + RATE_WINDOW_SECONDS * 1000, now, now,
      ]);
      const { points, expire } = r.rows[0];
      const msBeforeNext = expire ? Math.max(Number(expire) - now, 0) : -1;
      if (points > limit) return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
      return { allowed: true, limit, remaining: Math.max(limit - points, 0), resetSeconds: Math.ceil(msBeforeNext / 1000) };
    },
  };
}
