import { RateLimiterPostgres, RateLimiterRes, RateLimiterSQLite, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { isPostgres } from '../../db/sql.js';

export const RATE_WINDOW_SECONDS = 60;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `subject` against `limit` per 60 s window. */
  consume(subject: string, limit: number): Promise<RateLimitResult>;
}

/**
 * The short-window rate limit (spec 5.5 condition 5) on rate-limiter-flexible, stored in the service's own
 * database (SQLite, or PostgreSQL so that several processes share one count). One limiter per limit value.
 */
export function createRateLimiter(ds: DataSource): RateLimiter {
  const limiters = new Map<number, Promise<RateLimiterAbstract>>();
  const driver = ds.driver as unknown as { databaseConnection?: unknown; master?: unknown };
  const make = (points: number) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const common = { points, duration: RATE_WINDOW_SECONDS, keyPrefix: `rl${points}`, tableName: 'rate_limits', tableCreated: true };
      // the library may call back synchronously, inside its constructor: settle after it returns
      const done = (err?: unknown) => queueMicrotask(() => (err ? reject(err) : resolve(limiter)));
      const limiter: RateLimiterAbstract = isPostgres(ds)
        ? new RateLimiterPostgres({ ...common, storeClient: driver.master, storeType: 'pool', clearExpiredByTimeout: false }, done)
        : new RateLimiterSQLite(
            { ...common, storeClient: driver.databaseConnection, storeType: 'better-sqlite3', clearExpiredByTimeout: false },
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
