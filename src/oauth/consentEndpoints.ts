import type { Request, Response } from 'express';
import { Membership, Organization } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { inTransaction } from '../procedures/tx.js';
import { consentView } from '../web/consentView.js';
import { checkCsrf, csrfToken } from '../web/csrf.js';
import { sendErrorPage, sendPage } from '../web/layout.js';
import { currentUser } from '../web/session.js';
import { redirectTo, verifyAuthorizationRequest } from './authorizationRequest.js';
import { issueCode } from './codeStore.js';

const EXPIRED = 'This authorization request is invalid or has expired. Start again from the app.';
const CSRF_FAILED = 'This form expired or did not come from this site. Go back, reload the page and try again.';

/** The user's organizations, oldest membership first: the first is the default acting context. */
async function organizationsOf(s: Services, userId: string): Promise<{ id: string; name: string }[]> {
  const memberships = await s.ds.manager.find(Membership, { where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  const out: { id: string; name: string }[] = [];
  for (const m of memberships) {
    const org = await s.ds.manager.findOneBy(Organization, { id: m.organizationId });
    if (org) out.push({ id: org.id, name: org.name });
  }
  return out;
}

const loginUrl = (request: string) => `/login?next=${encodeURIComponent(`/oauth/consent?request=${encodeURIComponent(request)}`)}`;

/**
 * /oauth/consent (spec 5.6, issue 4 item 4). GET shows the consent screen to the signed-in user (else
 * sends them to /login and back). POST (CSRF-checked) answers: `Deny` redirects with `access_denied`,
 * `Allow` with a single-use code bound to the client, redirect_uri, PKCE challenge, resource, user, scopes
 * and the chosen acting context; both carry `state` and `iss`.
 */
export function consentEndpoints({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const verified = await verifyAuthorizationRequest(s, req.query.request);
      if (!verified) return sendErrorPage(res, 400, 'Invalid authorization request', EXPIRED);
      const who = await currentUser(s, req);
      if (!who) return res.redirect(302, loginUrl(req.query.request as string));
      const { client, request } = verified;
      sendPage(res, 200, consentView({
        clientName: client.name, kind: client.kind, scopes: request.scopes, resource: request.resource,
        redirectUri: request.redirectUri, organizations: await organizationsOf(s, who.user.id),
        request: req.query.request as string, csrf: csrfToken(s, req, res, who.session), email: who.user.email,
      }));
    },

    async answer(req: Request, res: Response) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const verified = await verifyAuthorizationRequest(s, body.request);
      if (!verified) return sendErrorPage(res, 400, 'Invalid authorization request', EXPIRED);
      const who = await currentUser(s, req);
      if (!who) return res.redirect(303, loginUrl(body.request as string));
      if (!checkCsrf(s, req, who.session, body.csrf)) return sendErrorPage(res, 403, 'Invalid authorization request', CSRF_FAILED);
      const { client, request } = verified;
      res.set('Cache-Control', 'no-store');
      if (body.decision === 'deny') {
        return res.redirect(303, redirectTo(s, request.redirectUri, {
          error: 'access_denied', error_description: 'The user denied the request', state: request.state,
        }));
      }
      if (body.decision !== 'allow') return sendErrorPage(res, 400, 'Invalid authorization request', 'Choose Allow or Deny.');
      const orgs = await organizationsOf(s, who.user.id);
      const chosen = body.organization ?? orgs[0]?.id ?? 'personal';
      const organizationId = chosen === 'personal' ? null : orgs.find((o) => o.id === chosen)?.id;
      if (organizationId === undefined) return sendErrorPage(res, 400, 'Invalid authorization request', 'Choose one of your organizations or Personal.');
      const code = await inTransaction(s, (m) =>
        issueCode(m, s.now(), {
          clientId: client.id, userId: who.user.id, organizationId, scopes: request.scopes, resource: request.resource,
          redirectUri: request.redirectUri, codeChallenge: request.codeChallenge,
        }),
      );
      res.redirect(303, redirectTo(s, request.redirectUri, { code, state: request.state }));
    },
  };
}
