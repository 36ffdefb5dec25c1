import type { Request, Response } from 'express';
import { hashPassword, verifyPassword } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { findUserByEmail } from '../domain/users.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendErrorPage, sendPage } from './layout.js';
import type { LoginThrottle } from './loginThrottle.js';
import { safeNext } from './safeNext.js';
import { currentUser, startSession } from './session.js';
import { RETRY_AFTER } from '../http/headers.js';

export interface LoginPageOptions {
  services: Services;
  throttle: LoginThrottle;
}

let dummyHash: Promise<string> | undefined;
/** Verifying against a throwaway hash for unknown emails keeps both answers equally slow. */
const dummy = () => (dummyHash ??= hashPassword('not-a-real-password'));

/**
 * `/login`: inputs labelled `Email` and `Password`, button `Sign in`; returns to `next` (a
 * same-origin path only). Sign-in attempts are throttled per email+address and per address, counted
 * before the password is checked.
 */
export function loginPage({ services: s, throttle }: LoginPageOptions) {
  function render(req: Request, res: Response, status: number, o: { next: string; email?: string; error?: string }) {
    const csrf = csrfToken(s, req, res, null);
    sendPage(
      res,
      status,
      page({
        title: 'Sign in',
        body: html`${o.error ? html`<p class="error" role="alert">${o.error}</p>` : null}
<form method="post" action="/login">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="next" value="${o.next}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${o.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
      }),
    );
  }

  return {
    async show(req: Request, res: Response) {
      const next = safeNext(s.config.baseUrl, req.query.next);
      if (await currentUser(s, req)) return res.redirect(303, next);
      render(req, res, 200, { next });
    },

    async submit(req: Request, res: Response) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const next = safeNext(s.config.baseUrl, body.next);
      if (!checkCsrf(s, req, null, body.csrf)) {
        return sendErrorPage(
          res,
          403,
          'Sign in',
          'This form expired or did not come from this site. Go back, reload the page and try again.',
        );
      }
      const email = typeof body.email === 'string' ? body.email.trim() : '';
      const password = typeof body.password === 'string' ? body.password : '';
      const ip = req.ip ?? 'unknown';
      // counted before the password is checked: a parallel burst gets no more checks than the limit
      const wait = await throttle.attempt(email, ip);
      if (wait > 0) {
        res.set(RETRY_AFTER, String(wait));
        return render(req, res, 429, {
          next,
          email,
          error: `Too many failed sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`,
        });
      }
      const user = email ? await findUserByEmail(s.ds.manager, email) : null;
      const ok = user
        ? await verifyPassword(password, user.passwordHash)
        : (await verifyPassword(password, await dummy()), false);
      if (!user || !ok) {
        return render(req, res, 401, { next, email, error: 'Email or password is incorrect.' });
      }
      await throttle.succeeded(email, ip);
      await startSession(s, req, res, user.id);
      res.redirect(303, next);
    },
  };
}
