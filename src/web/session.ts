import { parse as parseCookies } from 'cookie';
import type { CookieOptions, Request, Response } from 'express';
import { jwtVerify, SignJWT } from 'jose';
import { randomBytes } from 'node:crypto';
import { User } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { signingKey } from './signingKey.js';

/** The browser session cookie of the web pages (issue 4 item 1). */
export const SESSION_COOKIE = 'svc_session';
/** A sign-in lasts 12 hours. */
export const SESSION_TTL_S = 12 * 60 * 60;

export interface Session {
  userId: string;
  /** Session id (the JWT's `jti`): what the forms' CSRF tokens are bound to. */
  sid: string;
}

/**
 * Cookie flags of the web pages: HttpOnly, SameSite=Lax, Secure when BASE_URL is https, whole site.
 */
export const cookieOptions = (s: Services): CookieOptions => ({
  httpOnly: true, sameSite: 'lax', secure: s.config.baseUrl.startsWith('https:'), path: '/',
});

export function readCookie(req: Request, name: string): string | undefined {
  return parseCookies(req.headers.cookie ?? '')[name];
}

/**
 * The internal front-end JWT: HS256 with a key derived from the server secret for this purpose only, with
 * an audience (`BASE_URL/web`) no API surface accepts. `/v1` and `/mcp` never take it: they accept only
 * API keys and `svc_at_` tokens (spec 5.1).
 */
export async function startSession(s: Services, res: Response, userId: string): Promise<Session> {
  const now = Math.floor(s.now().getTime() / 1000);
  const sid = randomBytes(16).toString('base64url');
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId).setJti(sid).setIssuer(s.config.baseUrl).setAudience(`${s.config.baseUrl}/web`)
    .setIssuedAt(now).setExpirationTime(now + SESSION_TTL_S)
    .sign(signingKey(s.secret, 'session'));
  res.cookie(SESSION_COOKIE, jwt, { ...cookieOptions(s), maxAge: SESSION_TTL_S * 1000 });
  return { userId, sid };
}

/** The valid session of the request (signature, issuer, audience, expiry on the injected clock), or null. */
export async function readSession(s: Services, req: Request): Promise<Session | null> {
  const jwt = readCookie(req, SESSION_COOKIE);
  if (!jwt) return null;
  try {
    const { payload } = await jwtVerify(jwt, signingKey(s.secret, 'session'), {
      algorithms: ['HS256'], issuer: s.config.baseUrl, audience: `${s.config.baseUrl}/web`, currentDate: s.now(),
      requiredClaims: ['sub', 'jti', 'exp'],
    });
    return { userId: payload.sub!, sid: payload.jti! };
  } catch {
    return null;
  }
}

/** The signed-in user (a session whose user still exists), or null. */
export async function currentUser(s: Services, req: Request): Promise<{ session: Session; user: User } | null> {
  const session = await readSession(s, req);
  if (!session) return null;
  const user = await s.ds.manager.findOneBy(User, { id: session.userId });
  return user ? { session, user } : null;
}

export function endSession(s: Services, res: Response): void {
  res.clearCookie(SESSION_COOKIE, cookieOptions(s));
}
