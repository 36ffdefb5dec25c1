import { RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { isPostgres } from '../../db/sql.js';
import type { RateLimiter } from '../contract.js';
import { createSqliteRateLimiter } from '../fastpaths/sqliteRateLimiter.js';
import { driverPostgresPool } from '../fastpaths/typeormDriver.js';

export type { RateLimiter, RateLimitResult } from '../contract.js';

export const RATE_WINDOW_SECONDS = 60;

/**
 * The short-window rate limit, stored in the service's own database: on PostgreSQL
 * rate-limiter-flexible's RateLimiterPostgres (several processes share one count); on SQLite the same
 * table, keys and single upsert as the library's RateLimiterSQLite, run as one prepared statement
 * (src/fastpaths/sqliteRateLimiter.ts).
 */
export function createRateLimiter(ds: DataSource): RateLimiter {
  if (!isPostgres(ds)) return createSqliteRateLimiter(ds, RATE_WINDOW_SECONDS);
  const limiters = new Map<number, Promise<RateLimiterAbstract>>();
  const make = (points: number) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const common = {
        points,
        duration: RATE_WINDOW_SECONDS,
        keyPrefix: `rl${points}`,
        tableName: 'rate_limits',
        tableCreated: true,
      };
      // the library may call back synchronously, inside its constructor: settle after it returns
      const done = (err?: unknown) => queueMicrotask(() => (err ? reject(err) : resolve(limiter)));
      const limiter: RateLimiterAbstract = new RateLimiterPostgres(
        { ...common, storeClient: driverPostgresPool<unknown>(ds), storeType: 'pool', clearExpiredByTimeout: false },
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
