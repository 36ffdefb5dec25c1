import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { verifyAuthorizationRequest } from '../oauth/authorizationRequest.js';
import { approvalRedirect, chosenContext, consentContexts, denialRedirect, notApprovedHere } from '../oauth/consent.js';
import { consentView } from './consentView.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { sendErrorPage, sendPage } from './layout.js';
import { currentUser } from './session.js';
import { CACHE_CONTROL_HEADER } from '../http/headers.js';

const EXPIRED = 'This authorization request is invalid or has expired. Start again from the app.';
const CSRF_FAILED = 'This form expired or did not come from this site. Go back, reload the page and try again.';

const loginUrl = (request: string) =>
  `/login?next=${encodeURIComponent(`/oauth/consent?request=${encodeURIComponent(request)}`)}`;

/**
 * /oauth/consent, the page; the rules are oauth/'s (consent.ts). GET shows the
 * consent screen to the signed-in user (else sends them to /login and back). POST (CSRF-checked) answers:
 * `Deny` redirects with `access_denied`, `Allow` with a single-use code bound to the client, redirect_uri,
 * PKCE challenge, resource, user, scopes and the chosen acting context; both carry `state` and `iss`.
 */
export function consentPage({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const verified = await verifyAuthorizationRequest(s, req.query.request);
      if (!verified) return sendErrorPage(res, 400, 'Invalid authorization request', EXPIRED);
      const who = await currentUser(s, req);
      if (!who) return res.redirect(302, loginUrl(req.query.request as string));
      const { client, request } = verified;
      const contexts = await consentContexts(s, who.user.id, request);
      if (!contexts.orgs.length && !contexts.personal)
        return sendErrorPage(res, 403, 'Client not approved', notApprovedHere(request.clientUrl!));
      sendPage(
        res,
        200,
        consentView({
          clientName: client.name,
          kind: client.kind,
          scopes: request.scopes,
          resource: request.resource,
          clientUrl: request.clientUrl,
          redirectUri: request.redirectUri,
          organizations: contexts.orgs,
          personal: contexts.personal,
          request: req.query.request as string,
          csrf: csrfToken(s, req, res, who.session),
          email: who.user.email,
        }),
      );
    },

    async answer(req: Request, res: Response) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const verified = await verifyAuthorizationRequest(s, body.request);
      if (!verified) return sendErrorPage(res, 400, 'Invalid authorization request', EXPIRED);
      const who = await currentUser(s, req);
      if (!who) return res.redirect(303, loginUrl(body.request as string));
      if (!checkCsrf(s, req, who.session, body.csrf))
        return sendErrorPage(res, 403, 'Invalid authorization request', CSRF_FAILED);
      const { client, request } = verified;
      res.set(CACHE_CONTROL_HEADER, 'no-store');
      if (body.decision === 'deny') return res.redirect(303, denialRedirect(s, request));
      if (body.decision !== 'allow')
        return sendErrorPage(res, 400, 'Invalid authorization request', 'Choose Allow or Deny.');
      const contexts = await consentContexts(s, who.user.id, request);
      if (!contexts.orgs.length && !contexts.personal)
        return sendErrorPage(res, 403, 'Client not approved', notApprovedHere(request.clientUrl!));
      const organizationId = chosenContext(contexts, body.organization);
      if (organizationId === undefined) {
        return sendErrorPage(
          res,
          400,
          'Invalid authorization request',
          contexts.personal
            ? 'Choose one of your organizations or Personal.'
            : 'Choose one of the organizations offered.',
        );
      }
      res.redirect(
        303,
        await approvalRedirect(s, { clientId: client.id, userId: who.user.id, organizationId, request }),
      );
    },
  };
}
