import type { IssuedTokens } from './tokenStore.js';

/** The token response body: `expires_in` is 3600 except when the family ends sooner. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export const tokenResponse = (t: IssuedTokens): TokenResponse => ({
  access_token: t.accessToken,
  token_type: 'Bearer',
  expires_in: t.expiresIn,
  refresh_token: t.refreshToken,
  scope: t.scopes.join(' '),
});
