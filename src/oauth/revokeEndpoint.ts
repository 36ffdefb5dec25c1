import type { Request, Response } from 'express';
import { grantById } from '../../db/stores/oauth.js';
import type { Services } from '../domain/services.js';
import { inTransaction } from '../../db/transaction.js';
import { authenticateClient } from './authenticateClient.js';
import { formParams } from './formParams.js';
import { NO_STORE, OAuthError, sendOAuthError } from './OAuthError.js';
import { findToken, revokeGrant, revokeToken } from './tokenStore.js';

/**
 * POST /oauth/revoke (RFC 7009): the client authenticates as at the token endpoint. A refresh token
 * revokes its whole grant; an access token only itself. Unknown, expired or already revoked tokens answer
 * 200 as well; a token of another client is refused with `unauthorized_client`.
 */
export function revokeEndpoint({ services: s }: { services: Services }) {
  return async (req: Request, res: Response) => {
    try {
      const p = formParams(req);
      const client = await authenticateClient(s, req, p);
      const value = p.one('token');
      if (!value) throw new OAuthError('invalid_request', 'token is required');
      const token = await findToken(s.ds.manager, value);
      const grant = token ? await grantById(s.ds, token.grantId) : null;
      if (token && grant) {
        if (grant.clientId !== client.id)
          throw new OAuthError('unauthorized_client', 'The token was not issued to this client');
        await inTransaction(s, (m) =>
          token.kind === 'refresh' ? revokeGrant(m, s.now(), grant.id) : revokeToken(m, s.now(), token.id),
        );
      }
      res.set(NO_STORE).status(200).end();
    } catch (err) {
      if (!(err instanceof OAuthError)) s.log.error({ err }, 'revocation endpoint failed');
      sendOAuthError(res, err);
    }
  };
}
