import type { DataSource } from 'typeorm';
import { sql } from '../sql.js';

// The sign-in throttle's counts: one window per key in the `rate_limits` table, as rate-limiter-flexible keeps
// them (`key`, `points`, `expire` in ms). Raw statements on `sql()`: the count is one atomic upsert, so concurrent
// attempts each get their own count (SQLite and PostgreSQL alike).

/** Adds one to the key's window (opening one that ends at `windowEnd` if it has none or it ended by `at`). */
const COUNT_ATTEMPT =
  'INSERT INTO "rate_limits" ("key", "points", "expire") VALUES (?, 1, ?) ON CONFLICT ("key") DO UPDATE SET ' +
  '"points" = CASE WHEN "rate_limits"."expire" IS NULL OR "rate_limits"."expire" > ? THEN "rate_limits"."points" + 1 ELSE 1 END, ' +
  '"expire" = CASE WHEN "rate_limits"."expire" IS NULL OR "rate_limits"."expire" > ? THEN "rate_limits"."expire" ELSE excluded."expire" END ' +
  'RETURNING "points", "expire"';
const GIVE_BACK = 'UPDATE "rate_limits" SET "points" = "points" - 1 WHERE "key" = ? AND "points" > 0 AND "expire" > ?';
const CLEAR = 'DELETE FROM "rate_limits" WHERE "key" = ?';

/** Counts one attempt under `key` at `at` (ms); the window's count and its end (ms). */
export async function countAttempt(ds: DataSource, key: string, at: number, windowEnd: number) {
  const r = await sql<{ points: number | string; expire: number | string }>(ds, COUNT_ATTEMPT, [
    key,
    windowEnd,
    at,
    at,
  ]);
  return { points: Number(r.rows[0].points), expire: Number(r.rows[0].expire) };
}

/** Takes one attempt off the key's window while it is open at `at` (ms). */
export async function giveBackAttempt(ds: DataSource, key: string, at: number): Promise<void> {
  await sql(ds, GIVE_BACK, [key, at]);
}

export async function clearAttempts(ds: DataSource, key: string): Promise<void> {
  await sql(ds, CLEAR, [key]);
}
