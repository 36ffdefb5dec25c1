import type { DataSource } from 'typeorm';
import { clearSignInAttempts, countSignInAttempt, giveBackSignInAttempt } from '../domain/webSessions.js';

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
  // the first attempt opens a window of LOGIN_WINDOW_S, later ones add to it until it ends
  const count = async (key: string, max: number, at: number): Promise<number> => {
    const { points, expire } = await countSignInAttempt(ds, key, at, at + LOGIN_WINDOW_S * 1000);
    return points > max ? Math.max(1, Math.ceil((expire - at) / 1000)) : 0;
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
        clearSignInAttempts(ds, accountKey(email, ip)),
        giveBackSignInAttempt(ds, addressKey(ip), now().getTime()),
      ]);
    },
  };
}
