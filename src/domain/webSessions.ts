import { LessThan, type DataSource, type EntityManager } from 'typeorm';
import { WebSession } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
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
  const session = m.create(WebSession, {
    id: newId('ses', now.getTime()),
    tokenHash: sha256Hex(token),
    userId,
    createdAt: iso(now),
    lastSeenAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + SESSION_ABSOLUTE_MS)),
  });
  await m.insert(WebSession, session);
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
  const [row] = (await sql<WebSession>(ds, 'SELECT * FROM "web_sessions" WHERE "tokenHash" = ?', [hash])).rows;
  if (!row || !safeEqual(row.tokenHash, hash) || !alive(row, now)) return null;
  if (now.getTime() - Date.parse(row.lastSeenAt) >= TOUCH_EVERY_MS) {
    await sql(ds, 'UPDATE "web_sessions" SET "lastSeenAt" = ? WHERE "id" = ? AND "lastSeenAt" < ?', [
      iso(now),
      row.id,
      iso(now),
    ]);
  }
  return row;
}

/** Ends one session (sign-out): its cookie stops working at once, in every process. */
export async function revokeWebSession(m: EntityManager, sessionId: string): Promise<void> {
  await m.delete(WebSession, { id: sessionId });
}

/** Ends every session of a user (sign out everywhere, a password change). Returns how many ended. */
export async function revokeUserWebSessions(m: EntityManager, userId: string): Promise<number> {
  return (await m.delete(WebSession, { userId })).affected ?? 0;
}

/**
 * Housekeeping (daily, with the other purges): deletes sessions past their absolute end or idle past SESSION_IDLE_MS.
 */
export async function purgeExpiredWebSessions(s: Services): Promise<number> {
  const m = s.ds.manager;
  const now = s.now();
  const ended = (await m.delete(WebSession, { expiresAt: LessThan(iso(now)) })).affected ?? 0;
  const idle =
    (await m.delete(WebSession, { lastSeenAt: LessThan(iso(new Date(now.getTime() - SESSION_IDLE_MS))) })).affected ??
    0;
  return ended + idle;
}
