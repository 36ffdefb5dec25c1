import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { authenticateClient } from './authenticateClient.js';
import { formParams } from './formParams.js';
import { GRANTS, grantOf } from './grants/index.js';
import { NO_STORE, OAuthError, sendOAuthError } from './OAuthError.js';

const UNSUPPORTED = `grant_type must be ${GRANTS.map((g) => g.grantType).join(' or ')}`;

/**
 * POST /oauth/token: form-encoded; authenticates the client, then runs the grant. Answers the
 * token response or an RFC 6749 error, always with `Cache-Control: no-store`. The grants are
 * the table of grants/index.ts.
 */
export function tokenEndpoint({ services: s }: { services: Services }) {
  return async (req: Request, res: Response) => {
    try {
      const p = formParams(req);
      const client = await authenticateClient(s, req, p);
      const grantType = p.one('grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
      const grant = grantOf(grantType);
      if (!grant) throw new OAuthError('unsupported_grant_type', UNSUPPORTED);
      // every parameter read first (a repeated one is refused), then the missing ones refused in order
      const params = Object.fromEntries(grant.parameters.map(({ name }) => [name, p.one(name)]));
      for (const { name, required, hint } of grant.parameters) {
        if (required && !params[name])
          throw new OAuthError('invalid_request', `${name} is required${hint ? ` (${hint})` : ''}`);
      }
      const body = await grant.handler(s, client, params, p);
      res.set(NO_STORE).status(200).json(body);
    } catch (err) {
      if (!(err instanceof OAuthError)) s.log.error({ err }, 'token endpoint failed');
      sendOAuthError(res, err);
    }
  };
}
