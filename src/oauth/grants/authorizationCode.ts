import { setCodeGrant } from '../../../db/stores/oauth.js';
import type { Services } from '../../domain/services.js';
import { inTransaction } from '../../../db/transaction.js';
import { type AuthenticatedClient, requireApprovedContext } from '../authenticateClient.js';
import { consumeCode, findCode } from '../codeStore.js';
import { OAuthError } from '../OAuthError.js';
import { pkceMatches } from '../pkce.js';
import { type TokenResponse, tokenResponse } from '../tokenResponse.js';
import type { TokenGrant } from './grant.js';
import { createGrant, issueTokens, revokeGrant } from '../tokenStore.js';

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636): the code must belong to the
 * client, match the PKCE verifier and the redirect_uri, and be unused and unexpired; a metadata-document
 * client must still be approved for the code's acting context. The exchange starts a
 * grant (a refresh family) in the acting context chosen at consent. A code presented again revokes every
 * token its first exchange issued (RFC 6749 §4.1.2).
 */
async function exchangeAuthorizationCode(
  s: Services,
  client: AuthenticatedClient,
  params: Readonly<Record<string, string | undefined>>,
): Promise<TokenResponse> {
  const codeValue = params.code!;
  const redirectUri = params.redirect_uri!;
  const verifier = params.code_verifier!;
  const resource = params.resource;

  const code = await findCode(s.ds.manager, codeValue);
  if (!code || code.clientId !== client.id) throw new OAuthError('invalid_grant', 'The authorization code is invalid');
  if (!pkceMatches(verifier, code.codeChallenge))
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  if (code.redirectUri !== redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  if (resource !== undefined && resource !== code.resource) {
    throw new OAuthError('invalid_target', 'resource does not match the authorization request');
  }
  // the approval may have been withdrawn since consent (the code is then left unused)
  requireApprovedContext(client, code.organizationId);

  const now = s.now();
  const result = await inTransaction(s, async (m) => {
    if (!code.usedAt && Date.parse(code.expiresAt) <= now.getTime()) return { kind: 'expired' as const };
    if (!(await consumeCode(m, now, code.id))) {
      const used = await findCode(m, codeValue);
      if (used?.grantId) await revokeGrant(m, now, used.grantId);
      return { kind: 'reused' as const };
    }
    const grant = await createGrant(m, now, {
      clientId: client.id,
      userId: code.userId,
      organizationId: code.organizationId,
      scopes: code.scopes,
      resource: code.resource,
    });
    await setCodeGrant(m, code.id, grant.id);
    return { kind: 'issued' as const, tokens: await issueTokens(m, now, grant) };
  });
  if (result.kind === 'expired') throw new OAuthError('invalid_grant', 'The authorization code has expired');
  if (result.kind === 'reused') {
    throw new OAuthError(
      'invalid_grant',
      'The authorization code was already used; the tokens issued for it are revoked',
    );
  }
  return tokenResponse(result.tokens);
}

export const authorizationCodeGrant: TokenGrant = {
  grantType: 'authorization_code',
  parameters: [
    { name: 'code', required: true },
    { name: 'redirect_uri', required: true },
    { name: 'code_verifier', required: true, hint: 'PKCE' },
    { name: 'resource' },
  ],
  handler: exchangeAuthorizationCode,
};
