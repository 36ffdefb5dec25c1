import type { Services } from '../../domain/services.js';
import type { AuthenticatedClient } from '../authenticateClient.js';
import type { FormParams } from '../formParams.js';
import type { TokenResponse } from '../tokenResponse.js';

/** A parameter the token endpoint reads for a grant before running it. */
export interface GrantParameter {
  name: string;
  /** Missing or empty is `invalid_request` "<name> is required" (with ` (<hint>)` when given). */
  required?: true;
  hint?: string;
}

/**
 * One grant type of the token endpoint: its `grant_type` value, the parameters read before it
 * runs (in this order: a repeated one is `invalid_request`, then a missing required one is, in this order
 * too), and the handler that answers the token response or throws an `OAuthError`. A handler may read more
 * parameters itself, later (those whose problems rank after the grant's own checks).
 */
export interface TokenGrant {
  grantType: string;
  parameters: readonly GrantParameter[];
  handler(
    s: Services,
    client: AuthenticatedClient,
    params: Readonly<Record<string, string | undefined>>,
    p: FormParams,
  ): Promise<TokenResponse>;
}
