import { LessThan, type DataSource, type EntityManager } from 'typeorm';
import { User, WebSession } from '../entities/index.js';
import { sql } from '../sql.js';

// Sign-in sessions of the pages (`web_sessions`). Every page view reads its session and marks it seen at most
// once a minute: those two are prepared statements on `sql()`; the rest goes through TypeORM's entity manager.

export async function insertWebSession(m: EntityManager, fields: WebSession): Promise<WebSession> {
  const session = m.create(WebSession, fields);
  await m.insert(WebSession, session);
  return session;
}

/** The session whose token hashes to `tokenHash`, or undefined. */
export async function webSessionByHash(ds: DataSource, tokenHash: string): Promise<WebSession | undefined> {
  return (await sql<WebSession>(ds, 'SELECT * FROM "web_sessions" WHERE "tokenHash" = ?', [tokenHash])).rows[0];
}

/** Sets `lastSeenAt` to `at` unless it is at `at` already. */
export async function touchWebSession(ds: DataSource, id: string, at: string): Promise<void> {
  await sql(ds, 'UPDATE "web_sessions" SET "lastSeenAt" = ? WHERE "id" = ? AND "lastSeenAt" < ?', [at, id, at]);
}

export async function deleteWebSession(m: EntityManager, id: string): Promise<void> {
  await m.delete(WebSession, { id });
}

/** Deletes every session of a user; how many. */
export async function deleteUserWebSessions(m: EntityManager, userId: string): Promise<number> {
  return (await m.delete(WebSession, { userId })).affected ?? 0;
}

/** Deletes the sessions past their end (`expiresAt` before `now`) or unused since `idleBefore`; how many. */
export async function deleteEndedWebSessions(m: EntityManager, now: string, idleBefore: string): Promise<number> {
  const ended = (await m.delete(WebSession, { expiresAt: LessThan(now) })).affected ?? 0;
  const idle = (await m.delete(WebSession, { lastSeenAt: LessThan(idleBefore) })).affected ?? 0;
  return ended + idle;
}

/** The user a session belongs to, or null when the user is gone. */
export const userOfSession = (ds: DataSource, userId: string): Promise<User | null> =>
  ds.manager.findOneBy(User, { id: userId });
