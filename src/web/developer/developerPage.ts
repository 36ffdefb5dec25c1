import type { Request, Response } from 'express';
import type { Services } from '../../domain/services.js';
import { checkCsrf, csrfToken } from '../csrf.js';
import { sendErrorPage, sendPage } from '../layout.js';
import { currentUser } from '../session.js';
import { COPY_SCRIPT } from './copyScript.js';
import type { SignedIn } from './developerAccess.js';
import { loadDeveloperData } from './developerData.js';
import { developerView, showsSecret, type DeveloperViewState } from './developerView.js';
import { noticeText } from './notices.js';
import { CACHE_CONTROL_HEADER, CONTENT_TYPE_HEADER, CONTENT_TYPE_OPTIONS_HEADER } from '../../http/headers.js';

export const DEVELOPER_PATH = '/settings/developer';
const TITLE = 'Developer settings';

/** The signed-in user, or null after redirecting to /login (which returns here). */
export async function signedIn(s: Services, req: Request, res: Response): Promise<SignedIn | null> {
  const who = await currentUser(s, req);
  if (!who) res.redirect(303, `/login?next=${encodeURIComponent(DEVELOPER_PATH)}`);
  return who;
}

/**
 * The signed-in user and the form fields of a POST whose CSRF token belongs to their session (and whose
 * Origin, when sent, is ours); otherwise null after redirecting to /login or answering 403.
 */
export async function signedInForm(
  s: Services,
  req: Request,
  res: Response,
): Promise<{ who: SignedIn; body: Record<string, unknown> } | null> {
  const who = await signedIn(s, req, res);
  if (!who) return null;
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (!checkCsrf(s, req, who.session, body.csrf)) {
    sendErrorPage(
      res,
      403,
      TITLE,
      'This form expired or did not come from this site. Go back, reload the page and try again.',
    );
    return null;
  }
  return { who, body };
}

/** Renders the page for `who` with what this response adds (a message, a refused form, a secret shown once). */
export async function renderDeveloperPage(
  s: Services,
  req: Request,
  res: Response,
  who: SignedIn,
  state: DeveloperViewState = {},
  status = 200,
): Promise<void> {
  const csrf = csrfToken(s, req, res, who.session);
  const data = await loadDeveloperData(s, who);
  const body = developerView({ email: who.user.email, csrf, data, now: s.now(), state });
  sendPage(res, status, body, { scripts: showsSecret(state) });
}

/** GET /settings/developer; `?notice=` names a fixed confirmation of the action that redirected here. */
export function developerPage({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const who = await signedIn(s, req, res);
      if (!who) return;
      const text = noticeText(req.query.notice);
      await renderDeveloperPage(s, req, res, who, text ? { message: { kind: 'notice', text } } : {});
    },

    copyScript(_req: Request, res: Response) {
      res
        .set({
          [CONTENT_TYPE_HEADER]: 'text/javascript; charset=utf-8',
          [CACHE_CONTROL_HEADER]: 'no-cache',
          [CONTENT_TYPE_OPTIONS_HEADER]: 'nosniff',
        })
        .send(COPY_SCRIPT);
    },
  };
}
