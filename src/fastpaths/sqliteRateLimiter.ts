// Mirrors rate-limiter-flexible@11.4.0: `RateLimiterSQLite` (lib/RateLimiterSQLite.js: `_upsertTransaction`'s
// upsert and `_getRateLimiterRes`), the table, keys and statement it uses, as one prepared statement. Paired tests:
// test/fastpaths/sqliteRateLimiter.test.ts (same counts, windows and rows as the library's own limiter on a
// sequence of requests) and test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import type { DataSource } from 'typeorm';
import { runsGroupWork, sql, type SqlRun } from '../../db/sql.js';
import type { RateLimiter, RateLimitResult } from '../contract.js';

/**
 * RateLimiterSQLite's upsert: a window starts with the first request and counts until `expire`; a request
 * after it starts a new one. One statement, so it is atomic by itself.
 */
const SQLITE_UPSERT =
  'INSERT INTO "rate_limits" ("key", "points", "expire") VALUES (?, ?, ?) ON CONFLICT("key") DO UPDATE SET ' +
  '"points" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "points" + excluded."points" ELSE excluded."points" END, ' +
  '"expire" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "expire" ELSE excluded."expire" END ' +
  'RETURNING "points", "expire"';

/** The library's key: `<keyPrefix>:<subject>`, keyPrefix `rl<points>` (as the PostgreSQL limiter of rateLimit.ts). */
const storeKey = (subject: string, limit: number) => `rl${limit}:${subject}`;

/** The library's `_getRateLimiterRes`: what the upsert's row says of the request counted at `now`. */
function resultOf(row: { points: number; expire: number | null }, limit: number, now: number): RateLimitResult {
  const msBeforeNext = row.expire ? Math.max(Number(row.expire) - now, 0) : -1;
  if (row.points > limit)
    return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
  return {
    allowed: true,
    limit,
    remaining: Math.max(limit - row.points, 0),
    resetSeconds: Math.ceil(msBeforeNext / 1000),
  };
}

type WindowRow = { points: number; expire: number | null };

/**
 * The short-window rate limit on SQLite: the library's RateLimiterSQLite run as one prepared statement (the
 * library prepares it again and wraps it in a transaction on every request); `consumeIn`, the same statement
 * run inside a group's work (db/sql.ts `sqliteGroupWork`).
 * `windowSeconds` is the library's `duration`.
 */
export function createSqliteRateLimiter(ds: DataSource, windowSeconds: number): RateLimiter {
  const params = (subject: string, limit: number, now: number) => [
    storeKey(subject, limit),
    1,
    now + windowSeconds * 1000,
    now,
    now,
  ];
  return {
    async consume(subject, limit) {
      const now = Date.now();
      const r = await sql<WindowRow>(ds, SQLITE_UPSERT, params(subject, limit, now));
      return resultOf(r.rows[0], limit, now);
    },
    // only where the group commit can run it (db/sql.ts: better-sqlite3's own connection, open)
    ...(runsGroupWork(ds)
      ? {
          consumeIn(run: SqlRun, subject: string, limit: number) {
            const now = Date.now();
            return resultOf(run<WindowRow>(SQLITE_UPSERT, params(subject, limit, now)).rows[0], limit, now);
          },
        }
      : {}),
  };
}
