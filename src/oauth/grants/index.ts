import { authorizationCodeGrant } from './authorizationCode.js';
import type { TokenGrant } from './grant.js';
import { refreshTokenGrant } from './refreshToken.js';

export type { GrantParameter, TokenGrant } from './grant.js';

/**
 * The grant types of this authorization server, in the order discovery lists them: the token endpoint
 * dispatches on this table and the metadata's `grant_types_supported` is read from it.
 */
export const GRANTS: readonly TokenGrant[] = [authorizationCodeGrant, refreshTokenGrant];

/** The grant of a `grant_type` value, or undefined for one this server does not support. */
export const grantOf = (grantType: string): TokenGrant | undefined => GRANTS.find((g) => g.grantType === grantType);
