import type { EntityManager } from 'typeorm';
import type { OAuthGrant, OAuthToken } from '../../db/entities/index.js';
import {
  insertGrant,
  insertTokens,
  markTokenUsed,
  revokeGrantRows,
  revokeTokenRow,
  tokenByHash,
} from '../../db/stores/oauth.js';
import { randomToken, safeEqual, sha256Hex } from '../domain/hashing.js';
import { newId } from '../domain/ids.js';
import { iso } from '../domain/time.js';
import { ACCESS_TOKEN_PREFIX, ACCESS_TOKEN_TTL_MS, REFRESH_FAMILY_TTL_MS, REFRESH_TOKEN_PREFIX } from './constants.js';

export interface IssuedTokens {
  /** Access token lifetime left, in seconds. */
  expiresIn: number;
  accessToken: string;
  refreshToken: string;
  /** Granted scopes of the access token. */
  scopes: string[];
  accessTokenId: string;
}

export interface NewGrant {
  clientId: string;
  userId: string;
  organizationId: string | null;
  scopes: string[];
  resource: string;
}

/** Starts a refresh-token family: it and every token under it end 30 days from now. */
export async function createGrant(m: EntityManager, now: Date, g: NewGrant): Promise<OAuthGrant> {
  return insertGrant(m, {
    id: newId('grt', now.getTime()),
    ...g,
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + REFRESH_FAMILY_TTL_MS)),
    revokedAt: null,
  });
}

/**
 * Issues an access token (1 hour, `accessScopes`) and a refresh token (to the family's end, the grant's
 * scopes). Tokens are the prefix + 32 random bytes base64url; only their SHA-256 is stored.
 */
export async function issueTokens(
  m: EntityManager,
  now: Date,
  grant: OAuthGrant,
  accessScopes = grant.scopes,
): Promise<IssuedTokens> {
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX, 32);
  const refreshToken = randomToken(REFRESH_TOKEN_PREFIX, 32);
  const base = { grantId: grant.id, createdAt: iso(now), usedAt: null, revokedAt: null };
  const access = {
    ...base,
    id: newId('tok', now.getTime()),
    kind: 'access' as const,
    tokenHash: sha256Hex(accessToken),
    scopes: accessScopes,
    expiresAt: iso(new Date(Math.min(now.getTime() + ACCESS_TOKEN_TTL_MS, Date.parse(grant.expiresAt)))),
  };
  const refresh = {
    ...base,
    id: newId('tok', now.getTime()),
    kind: 'refresh' as const,
    tokenHash: sha256Hex(refreshToken),
    scopes: grant.scopes,
    expiresAt: grant.expiresAt,
  };
  await insertTokens(m, [access, refresh]);
  const expiresIn = Math.round((Date.parse(access.expiresAt) - now.getTime()) / 1000);
  return { accessToken, refreshToken, scopes: accessScopes, accessTokenId: access.id, expiresIn };
}

/** The stored token for a presented value (looked up by hash, compared again in constant time), or null. */
export async function findToken(m: EntityManager, token: string): Promise<OAuthToken | null> {
  const hash = sha256Hex(token);
  const row = await tokenByHash(m, hash);
  return row && safeEqual(row.tokenHash, hash) ? row : null;
}

/**
 * Marks a refresh token used, atomically: true for the one caller that rotates it, false when it was used
 * already (then the caller has detected reuse).
 */
export async function markRefreshUsed(m: EntityManager, now: Date, tokenId: string): Promise<boolean> {
  return markTokenUsed(m, tokenId, iso(now));
}

/** Revokes a grant and every token under it (reuse detection, RFC 7009 revocation, the settings page). */
export async function revokeGrant(m: EntityManager, now: Date, grantId: string): Promise<void> {
  await revokeGrantRows(m, grantId, iso(now));
}

/** Revokes one token (an access token presented to /oauth/revoke). */
export async function revokeToken(m: EntityManager, now: Date, tokenId: string): Promise<void> {
  await revokeTokenRow(m, tokenId, iso(now));
}
