import type { Request, Response } from 'express';
import type { Services } from '../../domain/services.js';
import { DomainError } from '../../domain/errors.js';
import { checkCsrf, csrfToken } from '../csrf.js';
import { sendErrorPage, sendPage } from '../layout.js';
import { currentUser } from '../session.js';
import { COPY_SCRIPT } from './copyScript.js';
import { organizationsOf, type SignedIn } from './developerAccess.js';
import { loadActivity, loadKeys, loadMcp, loadRuns, loadWebhookPage, loadWebhooks, usageOf } from './developerData.js';
import { DEVELOPER_PATH, type DeveloperPageName } from './developerNav.js';
import { developerView, showsSecret, type DeveloperPageData, type DeveloperViewState } from './developerView.js';
import { noticeText } from './notices.js';
import { CACHE_CONTROL_HEADER, CONTENT_TYPE_HEADER, CONTENT_TYPE_OPTIONS_HEADER } from '../../http/headers.js';

export { DEVELOPER_PATH } from './developerNav.js';
const TITLE = 'Developer settings';

/** The signed-in user, or null after redirecting to /login (which returns to the page asked for). */
export async function signedIn(s: Services, req: Request, res: Response): Promise<SignedIn | null> {
  const who = await currentUser(s, req);
  if (!who) {
    // a page comes back to itself after sign-in (safeNext checks it there); a form to the overview
    const back = req.method === 'GET' ? req.originalUrl : DEVELOPER_PATH;
    res.redirect(303, `/login?next=${encodeURIComponent(back)}`);
  }
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

/** The page a response's state belongs on: the one whose form or action it answers. */
function pageOf(state: DeveloperViewState): DeveloperPageName | 'webhook' {
  if (state.keys) return 'keys';
  if (state.webhooks) return state.webhooks.webhookId ? 'webhook' : 'webhooks';
  if (state.mcpClients || state.agents) return 'mcp';
  return 'overview';
}

/** Reads what one page shows; a webhook the user cannot manage (any more) falls back to the list. */
async function loadPage(
  s: Services,
  who: SignedIn,
  name: DeveloperPageName | 'webhook',
  webhookId: string | undefined,
): Promise<DeveloperPageData> {
  switch (name) {
    case 'overview': {
      const m = s.ds.manager;
      const orgs = await organizationsOf(m, who.user.id);
      const [{ keys }, rooms, mcp, usage] = await Promise.all([
        loadKeys(s, who),
        loadWebhooks(s, who),
        loadMcp(s, who),
        usageOf(s, who, orgs),
      ]);
      return { page: 'overview', summary: { keys, rooms, mcp, usage } };
    }
    case 'keys':
      return { page: 'keys', ...(await loadKeys(s, who)) };
    case 'webhook':
      if (webhookId) {
        try {
          return { page: 'webhook', webhook: await loadWebhookPage(s, who, webhookId) };
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
        }
      }
      return { page: 'webhooks', rooms: await loadWebhooks(s, who) };
    case 'webhooks':
      return { page: 'webhooks', rooms: await loadWebhooks(s, who) };
    case 'mcp':
      return { page: 'mcp', ...(await loadMcp(s, who)) };
    case 'runs':
      return { page: 'runs', ...(await loadRuns(s, who)) };
    case 'activity':
      return { page: 'activity', ...(await loadActivity(s, who)) };
  }
}

/**
 * Renders the page `state` belongs on (or `name`) for `who`, with what this response adds (a message, a refused
 * form, a secret shown once).
 */
export async function renderDeveloperPage(
  s: Services,
  req: Request,
  res: Response,
  who: SignedIn,
  state: DeveloperViewState = {},
  status = 200,
  name: DeveloperPageName | 'webhook' = pageOf(state),
): Promise<void> {
  const csrf = csrfToken(s, req, res, who.session);
  const data = await loadPage(s, who, name, state.webhooks?.webhookId);
  const body = developerView({ email: who.user.email, csrf, data, now: s.now(), state });
  sendPage(res, status, body, { scripts: showsSecret(state) });
}

/** The GET pages of /settings/developer; `?notice=` names a fixed confirmation of the action that led there. */
export function developerPage({ services: s }: { services: Services }) {
  const show = (name: DeveloperPageName) => async (req: Request, res: Response) => {
    const who = await signedIn(s, req, res);
    if (!who) return;
    const text = noticeText(req.query.notice);
    await renderDeveloperPage(s, req, res, who, text ? { message: { kind: 'notice', text } } : {}, 200, name);
  };
  return {
    overview: show('overview'),
    keys: show('keys'),
    webhooks: show('webhooks'),
    mcp: show('mcp'),
    runs: show('runs'),
    activity: show('activity'),

    /** GET /settings/developer/webhooks/:webhookId: one webhook, its chart, deliveries and actions. */
    async webhook(req: Request, res: Response) {
      const who = await signedIn(s, req, res);
      if (!who) return;
      const webhookId = String(req.params.webhookId ?? '');
      const text = noticeText(req.query.notice);
      try {
        const webhook = await loadWebhookPage(s, who, webhookId);
        const csrf = csrfToken(s, req, res, who.session);
        const state: DeveloperViewState = text ? { message: { kind: 'notice', text } } : {};
        sendPage(
          res,
          200,
          developerView({ email: who.user.email, csrf, data: { page: 'webhook', webhook }, now: s.now(), state }),
        );
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        await renderDeveloperPage(
          s,
          req,
          res,
          who,
          { webhooks: { message: { kind: 'error', text: 'No such webhook among the rooms you manage.' } } },
          404,
        );
      }
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
