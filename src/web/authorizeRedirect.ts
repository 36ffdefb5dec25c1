import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { parseAuthorizationRequest, redirectTo, signAuthorizationRequest } from '../oauth/authorizationRequest.js';
import { sendErrorPage } from './layout.js';
import { CACHE_CONTROL_HEADER } from '../http/headers.js';

/**
 * GET /oauth/authorize: a browser navigates here, so web/ answers it; oauth/ validates the
 * request (authorizationRequest.ts). Then 302 to the consent screen `/oauth/consent` (which asks to sign in
 * first when needed). A bad client_id or redirect_uri gets a 400 error page and never a redirect; any other
 * problem goes back to the client's redirect_uri as an RFC 6749 error with `state` and `iss`.
 */
export function authorizeRedirect({ services: s }: { services: Services }) {
  return async (req: Request, res: Response) => {
    const parsed = await parseAuthorizationRequest(s, req.query as Record<string, unknown>);
    if (parsed.kind === 'page') return sendErrorPage(res, 400, 'Invalid authorization request', parsed.message);
    if (parsed.kind === 'error') {
      res.set(CACHE_CONTROL_HEADER, 'no-store');
      return res.redirect(
        302,
        redirectTo(s, parsed.redirectUri, {
          error: parsed.error,
          error_description: parsed.description,
          state: parsed.state,
        }),
      );
    }
    const token = await signAuthorizationRequest(s, parsed.request);
    res.set(CACHE_CONTROL_HEADER, 'no-store');
    res.redirect(302, `/oauth/consent?request=${encodeURIComponent(token)}`);
  };
}
