import { RateLimiterPostgres, RateLimiterSQLite, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { isPostgres } from '../../db/sql.js';

/** Failed sign-ins allowed per email and client address in the window, and per address alone. */
export const LOGIN_FAILURES_PER_ACCOUNT = 5;
export const LOGIN_FAILURES_PER_IP = 50;
export const LOGIN_WINDOW_S = 15 * 60;

export interface LoginThrottle {
  /** Seconds to wait when sign-in from `ip` for `email` is blocked, else 0. Counts nothing. */
  blockedFor(email: string, ip: string): Promise<number>;
  /** Counts one failed sign-in. */
  failed(email: string, ip: string): Promise<void>;
  /** A successful sign-in clears the account's failures from that address. */
  succeeded(email: string, ip: string): Promise<void>;
}

/**
 * Throttles failed sign-ins (issue 4 item 1) with rate-limiter-flexible in the service's database (so every
 * server process shares the counts): 5 failures per email+address and 50 per address in 15 minutes, then
 * sign-in from there is refused until the window ends.
 */
export function createLoginThrottle(ds: DataSource): LoginThrottle {
  const driver = ds.driver as unknown as { databaseConnection?: unknown; master?: unknown };
  const make = (points: number, keyPrefix: string) => {
    let limiter: RateLimiterAbstract;
    return new Promise<RateLimiterAbstract>((resolve, reject) => {
      const common = { points, duration: LOGIN_WINDOW_S, keyPrefix, tableName: 'rate_limits', clearExpiredByTimeout: false };
      const done = (err?: unknown) => (err ? reject(err) : resolve(limiter));
      limiter = isPostgres(ds)
        ? new RateLimiterPostgres({ ...common, storeClient: driver.master, storeType: 'pool' }, done)
        : new RateLimiterSQLite({ ...common, storeClient: driver.databaseConnection, storeType: 'better-sqlite3' }, done);
    });
  };
  let limiters: Promise<[RateLimiterAbstract, RateLimiterAbstract]> | undefined;
  const get = () => (limiters ??= Promise.all([make(LOGIN_FAILURES_PER_ACCOUNT, 'login_acct'), make(LOGIN_FAILURES_PER_IP, 'login_ip')]));
  const accountKey = (email: string, ip: string) => `${email.trim().toLowerCase()}|${ip}`;
  return {
    async blockedFor(email, ip) {
      const [account, address] = await get();
      let wait = 0;
      for (const [l, key, max] of [[account, accountKey(email, ip), LOGIN_FAILURES_PER_ACCOUNT], [address, ip, LOGIN_FAILURES_PER_IP]] as const) {
        const r = await l.get(key);
        if (r && r.consumedPoints >= max) wait = Math.max(wait, Math.ceil(r.msBeforeNext / 1000));
      }
      return wait;
    },
    async failed(email, ip) {
      const [account, address] = await get();
      await Promise.all([account.penalty(accountKey(email, ip), 1), address.penalty(ip, 1)]);
    },
    async succeeded(email, ip) {
      const [account] = await get();
      await account.delete(accountKey(email, ip));
    },
  };
}
