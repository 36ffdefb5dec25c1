import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { safeEqual } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { cookieOptions, readCookie, type Session } from './session.js';
import { signingKey } from '../signingKey.js';

/** Binds the sign-in form's CSRF token before there is a session. */
export const PRE_SESSION_COOKIE = 'svc_csrf';

/**
 * CSRF protection of every form: a session-bound synchronizer token. The hidden
 * `csrf` field is HMAC(server key, session id); before sign-in it is bound the same way to a random
 * pre-session cookie (`svc_csrf`, HttpOnly, SameSite=Lax). A token is valid only for the session (or
 * pre-session) it was rendered for, and cannot be forged without the server secret. A POST whose `Origin`
 * header names another origin is refused as well.
 */
export function csrfToken(s: Services, req: Request, res: Response, session: Session | null): string {
  let binding: string;
  if (session) binding = `session:${session.sid}`;
  else {
    let pre = readCookie(req, PRE_SESSION_COOKIE);
    if (!pre || !/^[A-Za-z0-9_-]{22}$/.test(pre)) {
      pre = randomBytes(16).toString('base64url');
      res.cookie(PRE_SESSION_COOKIE, pre, { ...cookieOptions(s), maxAge: 2 * 60 * 60 * 1000 });
    }
    binding = `pre:${pre}`;
  }
  return mac(s, binding);
}

/** True when `token` is the CSRF token of this request's session (or pre-session) and the origin is ours. */
export function checkCsrf(s: Services, req: Request, session: Session | null, token: unknown): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== new URL(s.config.baseUrl).origin) return false;
  if (typeof token !== 'string' || !token) return false;
  const pre = readCookie(req, PRE_SESSION_COOKIE);
  const binding = session ? `session:${session.sid}` : pre ? `pre:${pre}` : null;
  return binding !== null && safeEqual(mac(s, binding), token);
}

const mac = (s: Services, binding: string) =>
  createHmac('sha256', signingKey(s.secret, 'csrf')).update(binding).digest('base64url');
