import type { Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { authenticateClient } from './authenticateClient.js';
import { formParams } from './formParams.js';
import { exchangeAuthorizationCode } from './grants/authorizationCode.js';
import { refreshTokens } from './grants/refreshToken.js';
import { NO_STORE, OAuthError, sendOAuthError } from './OAuthError.js';

/**
 * POST /oauth/token (spec 4, 5.6): form-encoded; authenticates the client, then runs the grant. Answers the
 * token response of CONTRACT §5 or an RFC 6749 error, always with `Cache-Control: no-store`.
 */
export function tokenEndpoint({ services: s }: { services: Services }) {
  return async (req: Request, res: Response) => {
    try {
      const p = formParams(req);
      const client = await authenticateClient(s, req, p);
      const grantType = p.one('grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
      let body;
      if (grantType === 'authorization_code') body = await exchangeAuthorizationCode(s, client, p);
      else if (grantType === 'refresh_token') body = await refreshTokens(s, client, p);
      else throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      res.set(NO_STORE).status(200).json(body);
    } catch (err) {
      if (!(err instanceof OAuthError)) s.log.error({ err }, 'token endpoint failed');
      sendOAuthError(res, err);
    }
  };
}
