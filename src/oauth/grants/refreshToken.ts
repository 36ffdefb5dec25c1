import { grantById } from '../../../db/stores/oauth.js';
import type { Services } from '../../domain/services.js';
import { inTransaction } from '../../../db/transaction.js';
import { type AuthenticatedClient, requireApprovedContext } from '../authenticateClient.js';
import type { FormParams } from '../formParams.js';
import { OAuthError } from '../OAuthError.js';
import { type TokenResponse, tokenResponse } from '../tokenResponse.js';
import type { TokenGrant } from './grant.js';
import { findToken, issueTokens, markRefreshUsed, revokeGrant } from '../tokenStore.js';

const REUSED = 'The refresh token was already used; every token of its grant is revoked';

/**
 * `grant_type=refresh_token`: rotates on every use, a new refresh token and a new access
 * token per call. Presenting a used refresh token revokes the whole family, access tokens included. The
 * family ends 30 days after its start. A metadata-document client must still be approved for the grant's
 * acting context (authenticateClient.ts). `scope` may narrow the new access token (RFC 6749 §6); `scope` and
 * `resource` are read only once the refresh token was found valid.
 */
async function refreshTokens(
  s: Services,
  client: AuthenticatedClient,
  params: Readonly<Record<string, string | undefined>>,
  p: FormParams,
): Promise<TokenResponse> {
  const value = params.refresh_token!;
  const token = await findToken(s.ds.manager, value);
  const grant = token?.kind === 'refresh' ? await grantById(s.ds, token.grantId) : null;
  if (!token || !grant || grant.clientId !== client.id)
    throw new OAuthError('invalid_grant', 'The refresh token is invalid');
  if (grant.revokedAt || token.revokedAt) throw new OAuthError('invalid_grant', 'The refresh token was revoked');

  const now = s.now();
  if (token.usedAt) {
    await inTransaction(s, (m) => revokeGrant(m, now, grant.id));
    throw new OAuthError('invalid_grant', REUSED);
  }
  if (Date.parse(grant.expiresAt) <= now.getTime())
    throw new OAuthError('invalid_grant', 'The refresh token has expired');
  // refused, not revoked: an approval given again lets the grant go on
  requireApprovedContext(client, grant.organizationId);

  const scopeParam = p.one('scope');
  const scopes = scopeParam === undefined ? grant.scopes : [...new Set(scopeParam.split(' ').filter(Boolean))];
  const beyond = scopes.filter((x) => !grant.scopes.includes(x));
  if (!scopes.length || beyond.length)
    throw new OAuthError('invalid_scope', 'scope must be within the scopes originally granted');
  const resource = p.one('resource');
  if (resource !== undefined && resource !== grant.resource)
    throw new OAuthError('invalid_target', 'resource does not match the grant');

  const result = await inTransaction(s, async (m) => {
    if (!(await markRefreshUsed(m, now, token.id))) {
      await revokeGrant(m, now, grant.id);
      return null;
    }
    return issueTokens(m, now, grant, scopes);
  });
  if (!result) throw new OAuthError('invalid_grant', REUSED);
  return tokenResponse(result);
}

export const refreshTokenGrant: TokenGrant = {
  grantType: 'refresh_token',
  parameters: [{ name: 'refresh_token', required: true }],
  handler: refreshTokens,
};
