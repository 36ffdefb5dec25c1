import type { DataSource, EntityManager } from 'typeorm';
import type { User, WebSession } from '../../db/entities/index.js';
import { inTransaction } from '../../db/transaction.js';
import {
  deleteEndedWebSessions,
  deleteUserWebSessions,
  deleteWebSession,
  insertWebSession,
  touchWebSession,
  userOfSession,
  webSessionByHash,
} from '../../db/stores/webSessions.js';
import { clearAttempts, countAttempt, giveBackAttempt } from '../../db/stores/signInAttempts.js';
import { randomToken, safeEqual, sha256Hex } from './hashing.js';
import { newId } from './ids.js';
import type { Services } from './services.js';
import { iso } from './time.js';

/** A session unused this long ends. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** `lastSeenAt` is written at most this often per session. */
const TOUCH_EVERY_MS = 60 * 1000;
/** The cookie's token: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Starts a session for `userId`: the row (token stored as its SHA-256) and the token for the cookie. */
export async function createWebSession(
  m: EntityManager,
  now: Date,
  userId: string,
): Promise<{ session: WebSession; token: string }> {
  const token = randomToken('', 32);
  const session = await insertWebSession(m, {
    id: newId('ses', now.getTime()),
    tokenHash: sha256Hex(token),
    userId,
    createdAt: iso(now),
    lastSeenAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + SESSION_ABSOLUTE_MS)),
  });
  return { session, token };
}

const alive = (s: WebSession, now: Date) =>
  now.getTime() < Date.parse(s.expiresAt) && now.getTime() < Date.parse(s.lastSeenAt) + SESSION_IDLE_MS;

/**
 * The live session whose token is `token` (looked up by hash, compared again in constant time), or null:
 * unknown, revoked (deleted), idle past SESSION_IDLE_MS or past its absolute end. Marks it seen.
 */
export async function findWebSession(ds: DataSource, now: Date, token: string): Promise<WebSession | null> {
  if (!TOKEN.test(token)) return null;
  const hash = sha256Hex(token);
  const row = await webSessionByHash(ds, hash);
  if (!row || !safeEqual(row.tokenHash, hash) || !alive(row, now)) return null;
  if (now.getTime() - Date.parse(row.lastSeenAt) >= TOUCH_EVERY_MS) {
    await touchWebSession(ds, row.id, iso(now));
  }
  return row;
}

/** Ends one session (sign-out): its cookie stops working at once, in every process. */
export async function revokeWebSession(m: EntityManager, sessionId: string): Promise<void> {
  await deleteWebSession(m, sessionId);
}

/** Ends every session of a user (sign out everywhere, a password change). Returns how many ended. */
export async function revokeUserWebSessions(m: EntityManager, userId: string): Promise<number> {
  return deleteUserWebSessions(m, userId);
}

/**
 * Housekeeping (daily, with the other purges): deletes sessions past their absolute end or idle past SESSION_IDLE_MS.
 */
export async function purgeExpiredWebSessions(s: Services): Promise<number> {
  const now = s.now();
  return deleteEndedWebSessions(s.ds.manager, iso(now), iso(new Date(now.getTime() - SESSION_IDLE_MS)));
}

/**
 * The sign-in throttle's counts (src/web/loginThrottle.ts), a window per key in the rate-limit table: counts one
 * attempt at `at` (ms), in a window ending at `windowEnd` when none is open; the window's count and end.
 */
export const countSignInAttempt = (ds: DataSource, key: string, at: number, windowEnd: number) =>
  countAttempt(ds, key, at, windowEnd);
/** Gives one attempt back to a window still open at `at` (ms). */
export const giveBackSignInAttempt = (ds: DataSource, key: string, at: number) => giveBackAttempt(ds, key, at);
export const clearSignInAttempts = (ds: DataSource, key: string) => clearAttempts(ds, key);

/** Signs `userId` in, ending the session `previousId` the browser still held, in one transaction. */
export const startWebSession = (s: Services, userId: string, previousId: string | null) =>
  inTransaction(s, async (m) => {
    if (previousId) await revokeWebSession(m, previousId);
    return createWebSession(m, s.now(), userId);
  });

/** Ends one session (sign-out), in a transaction of its own. */
export const endWebSession = (s: Services, sessionId: string): Promise<void> =>
  inTransaction(s, (m) => revokeWebSession(m, sessionId));

/** Ends every session of a user, in a transaction of its own; how many ended. */
export const endUserWebSessions = (s: Services, userId: string): Promise<number> =>
  inTransaction(s, (m) => revokeUserWebSessions(m, userId));

/** The signed-in user of a live session, or null when the user is gone. */
export const webSessionUser = (s: Services, userId: string): Promise<User | null> => userOfSession(s.ds, userId);

export type { User, WebSession };
