import type { DataSource } from 'typeorm';
import { sql } from '../../db/sql.js';

/** Sign-in attempts allowed per email and client address in the window, and per address alone. */
export const LOGIN_FAILURES_PER_ACCOUNT = 5;
export const LOGIN_FAILURES_PER_IP = 50;
export const LOGIN_WINDOW_S = 15 * 60;

export interface LoginThrottle {
  /**
   * Counts one sign-in attempt for `email` from `ip`, before its password is checked. Returns the seconds
   * to wait when the attempt is over a limit (it must then be refused unchecked), else 0.
   */
  attempt(email: string, ip: string): Promise<number>;
  /** A successful sign-in: the account's count from that address is cleared, the address gets its attempt back. */
  succeeded(email: string, ip: string): Promise<void>;
}

export interface LoginThrottleOptions {
  ds: DataSource;
  /** The service clock (windows start and end on it). */
  now: () => Date;
}

/**
 * One window per key in the `rate_limits` table, as rate-limiter-flexible keeps them (`key`, `points`,
 * `expire` in ms): the first attempt opens a window of LOGIN_WINDOW_S, later ones add to it until it ends.
 * One statement, so concurrent attempts each get their own count (SQLite and PostgreSQL alike).
 */
const COUNT_ATTEMPT =
  'INSERT INTO "rate_limits" ("key", "points", "expire") VALUES (?, 1, ?) ON CONFLICT ("key") DO UPDATE SET ' +
  '"points" = CASE WHEN "rate_limits"."expire" IS NULL OR "rate_limits"."expire" > ? THEN "rate_limits"."points" + 1 ELSE 1 END, ' +
  '"expire" = CASE WHEN "rate_limits"."expire" IS NULL OR "rate_limits"."expire" > ? THEN "rate_limits"."expire" ELSE excluded."expire" END ' +
  'RETURNING "points", "expire"';
const GIVE_BACK = 'UPDATE "rate_limits" SET "points" = "points" - 1 WHERE "key" = ? AND "points" > 0 AND "expire" > ?';
const CLEAR = 'DELETE FROM "rate_limits" WHERE "key" = ?';

/**
 * The sign-in throttle: 5 attempts per email+address and 50 per address
 * in 15 minutes, then sign-in from there is refused with the time left. Each attempt is counted first, in
 * one atomic statement, and only an attempt within both limits gets its password checked: a burst of
 * parallel guesses gets exactly as many checks as the limit. The counts live in the service's database
 * (the rate-limit table), so every process on one PostgreSQL shares them. A successful sign-in clears the
 * account's count and does not use up the address's.
 */
export function createLoginThrottle({ ds, now }: LoginThrottleOptions): LoginThrottle {
  const accountKey = (email: string, ip: string) => `login_acct:${email.trim().toLowerCase()}|${ip}`;
  const addressKey = (ip: string) => `login_ip:${ip}`;
  const count = async (key: string, max: number, at: number): Promise<number> => {
    const r = await sql<{ points: number | string; expire: number | string }>(ds, COUNT_ATTEMPT, [
      key,
      at + LOGIN_WINDOW_S * 1000,
      at,
      at,
    ]);
    const { points, expire } = r.rows[0];
    return Number(points) > max ? Math.max(1, Math.ceil((Number(expire) - at) / 1000)) : 0;
  };
  return {
    async attempt(email, ip) {
      const at = now().getTime();
      const waits = await Promise.all([
        count(accountKey(email, ip), LOGIN_FAILURES_PER_ACCOUNT, at),
        count(addressKey(ip), LOGIN_FAILURES_PER_IP, at),
      ]);
      return Math.max(...waits);
    },
    async succeeded(email, ip) {
      await Promise.all([
        sql(ds, CLEAR, [accountKey(email, ip)]),
        sql(ds, GIVE_BACK, [addressKey(ip), now().getTime()]),
      ]);
    },
  };
}
