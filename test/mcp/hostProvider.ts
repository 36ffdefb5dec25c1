import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** The redirect URI the hosts of these tests register and sign in through. */
export const REDIRECT = 'http://127.0.0.1:8976/callback';

/** An MCP host's OAuth state for one pre-registered client: what a desktop assistant keeps. */
export class HostProvider implements OAuthClientProvider {
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(readonly clientId: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Desk assistant',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }
  state() {
    return 'state-123';
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.clientId }; // registered by an administrator: no dynamic registration
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier!;
  }
}
