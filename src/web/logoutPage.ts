import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendErrorPage, sendPage } from './layout.js';
import { currentUser, endSession, readSession } from './session.js';

/**
 * `/logout`: GET shows a `Sign out` button, POST (with the CSRF token) clears the session cookie. Sessions
 * are stateless signed cookies: signing out removes the cookie from this browser; it expires in 12 hours
 * at the latest.
 */
export function logoutPage({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const who = await currentUser(s, req);
      if (!who) return res.redirect(303, '/login');
      const csrf = csrfToken(s, req, res, who.session);
      sendPage(res, 200, page({
        title: 'Sign out',
        signedIn: { email: who.user.email, csrf },
        body: html`<form method="post" action="/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>`,
      }));
    },

    async submit(req: Request, res: Response) {
      const session = await readSession(s, req);
      if (session && !checkCsrf(s, req, session, (req.body as Record<string, unknown> | undefined)?.csrf)) {
        return sendErrorPage(res, 403, 'Sign out', 'This form expired or did not come from this site. Go back, reload the page and try again.');
      }
      endSession(s, res);
      res.redirect(303, '/login');
    },
  };
}
