import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendErrorPage, sendPage } from './layout.js';
import { currentUser, endAllSessions, endSession, readSession } from './session.js';

const CSRF_FAILED = 'This form expired or did not come from this site. Go back, reload the page and try again.';

/**
 * `/logout`: GET shows a `Sign out` button and a `Sign out everywhere` button; POST /logout (with the CSRF
 * token) ends this session on the server and clears the cookie, POST /logout/everywhere ends every session
 * of the user. A copy of an ended session's cookie stops working at once.
 */
export function logoutPage({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const who = await currentUser(s, req);
      if (!who) return res.redirect(303, '/login');
      const csrf = csrfToken(s, req, res, who.session);
      sendPage(
        res,
        200,
        page({
          title: 'Sign out',
          signedIn: { email: who.user.email, csrf },
          body: html`<form method="post" action="/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>
<p class="muted">Signing out everywhere ends your sessions in every browser and on every device, this one included.</p>
<form method="post" action="/logout/everywhere"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out everywhere</button></form>`,
        }),
      );
    },

    async submit(req: Request, res: Response) {
      const session = await readSession(s, req);
      if (session && !checkCsrf(s, req, session, (req.body as Record<string, unknown> | undefined)?.csrf)) {
        return sendErrorPage(res, 403, 'Sign out', CSRF_FAILED);
      }
      await endSession(s, res, session);
      res.redirect(303, '/login');
    },

    async submitEverywhere(req: Request, res: Response) {
      const session = await readSession(s, req);
      if (!session) return res.redirect(303, '/login');
      if (!checkCsrf(s, req, session, (req.body as Record<string, unknown> | undefined)?.csrf)) {
        return sendErrorPage(res, 403, 'Sign out', CSRF_FAILED);
      }
      await endAllSessions(s, res, session.userId);
      res.redirect(303, '/login');
    },
  };
}
