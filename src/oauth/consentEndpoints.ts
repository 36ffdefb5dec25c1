import type { Request, Response } from 'express';
import { organizationsOf } from '../domain/memberships.js';
import type { Services } from '../domain/services.js';
import { inTransaction } from '../procedures/tx.js';
import { consentView } from '../web/consentView.js';
import { checkCsrf, csrfToken } from '../web/csrf.js';
import { sendErrorPage, sendPage } from '../web/layout.js';
import { currentUser } from '../web/session.js';
import { type AuthorizationRequest, redirectTo, verifyAuthorizationRequest } from './authorizationRequest.js';
import { approvedContexts } from './clientApprovals.js';
import { approvalHint } from './metadataClients.js';
import { issueCode } from './codeStore.js';

const EXPIRED = 'This authorization request is invalid or has expired. Start again from the app.';
const CSRF_FAILED = 'This form expired or did not come from this site. Go back, reload the page and try again.';

/**
 * The acting contexts the user may pick for this request: every organization and Personal for a registered
 * client or one an operator approved server-wide; for a metadata-document client otherwise only the user's
 * organizations whose administrators approved it (issue 19 item 1).
 */
async function contextsFor(s: Services, userId: string, request: AuthorizationRequest) {
  const orgs = (await organizationsOf(s.ds.manager, userId)).map(({ id, name }) => ({ id, name }));
  if (!request.clientUrl) return { orgs, personal: true };
  const approved = await approvedContexts(s.ds.manager, request.clientUrl);
  if (approved.all) return { orgs, personal: true };
  return { orgs: orgs.filter((o) => approved.organizationIds.includes(o.id)), personal: false };
}

const notApprovedHere = (url: string) =>
  `The client ${url} is not approved for any organization you belong to. ${approvalHint(url)}.`;

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
      const contexts = await contextsFor(s, who.user.id, request);
      if (!contexts.orgs.length && !contexts.personal) return sendErrorPage(res, 403, 'Client not approved', notApprovedHere(request.clientUrl!));
      sendPage(res, 200, consentView({
        clientName: client.name, kind: client.kind, scopes: request.scopes, resource: request.resource, clientUrl: request.clientUrl,
        redirectUri: request.redirectUri, organizations: contexts.orgs, personal: contexts.personal,
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
      const { orgs, personal } = await contextsFor(s, who.user.id, request);
      if (!orgs.length && !personal) return sendErrorPage(res, 403, 'Client not approved', notApprovedHere(request.clientUrl!));
      const chosen = body.organization ?? orgs[0]?.id ?? 'personal';
      const organizationId = chosen === 'personal' ? (personal ? null : undefined) : orgs.find((o) => o.id === chosen)?.id;
      if (organizationId === undefined) {
        return sendErrorPage(res, 400, 'Invalid authorization request', personal ? 'Choose one of your organizations or Personal.' : 'Choose one of the organizations offered.');
      }
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
