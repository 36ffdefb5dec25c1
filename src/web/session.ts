import { parse as parseCookies } from 'cookie';
import type { CookieOptions, Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import {
  endUserWebSessions,
  endWebSession,
  findWebSession,
  SESSION_ABSOLUTE_MS,
  startWebSession,
  webSessionUser,
  type User,
} from '../domain/webSessions.js';

/** The browser session cookie of the web pages. */
export const SESSION_COOKIE = 'svc_session';

export interface Session {
  userId: string;
  /** The stored session's id (never the cookie's token): what the forms' CSRF tokens are bound to. */
  sid: string;
}

/**
 * Cookie flags of the web pages: HttpOnly, SameSite=Lax, Secure when BASE_URL is https, whole site.
 */
export const cookieOptions = (s: Services): CookieOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: s.config.baseUrl.startsWith('https:'),
  path: '/',
});

export function readCookie(req: Request, name: string): string | undefined {
  return parseCookies(req.headers.cookie ?? '')[name];
}

/**
 * Signs `userId` in: a stored session whose random token the cookie carries (the
 * database keeps only its SHA-256). A session the browser still held is ended first. `/v1` and `/mcp`
 * never take the cookie: they accept only API keys and `svc_at_` tokens.
 */
export async function startSession(s: Services, req: Request, res: Response, userId: string): Promise<Session> {
  const previous = await readSession(s, req);
  const { session, token } = await startWebSession(s, userId, previous?.sid ?? null);
  res.cookie(SESSION_COOKIE, token, { ...cookieOptions(s), maxAge: SESSION_ABSOLUTE_MS });
  return { userId, sid: session.id };
}

/** The live stored session of the request (not revoked, idle or past its end on the injected clock), or null. */
export async function readSession(s: Services, req: Request): Promise<Session | null> {
  const token = readCookie(req, SESSION_COOKIE);
  if (!token) return null;
  const row = await findWebSession(s.ds, s.now(), token);
  return row ? { userId: row.userId, sid: row.id } : null;
}

/** The signed-in user (a live session whose user still exists), or null. */
export async function currentUser(s: Services, req: Request): Promise<{ session: Session; user: User } | null> {
  const session = await readSession(s, req);
  if (!session) return null;
  const user = await webSessionUser(s, session.userId);
  return user ? { session, user } : null;
}

/** Signs out: the stored session is deleted (a copy of the cookie stops working at once) and the cookie cleared. */
export async function endSession(s: Services, res: Response, session: Session | null): Promise<void> {
  if (session) await endWebSession(s, session.sid);
  res.clearCookie(SESSION_COOKIE, cookieOptions(s));
}

/** Signs the user out everywhere: every stored session of theirs is deleted, and this browser's cookie cleared. */
export async function endAllSessions(s: Services, res: Response, userId: string): Promise<number> {
  const ended = await endUserWebSessions(s, userId);
  res.clearCookie(SESSION_COOKIE, cookieOptions(s));
  return ended;
}
