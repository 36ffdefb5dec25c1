import { resourceMetadataUrl, SURFACES, type SurfaceName } from './surfaces.js';

/**
 * Why a credential was refused, as the door check records it (`ResponseState.challenge`); the adapters turn
 * it into the `WWW-Authenticate` header with `challengeHeader`.
 * - `unauthorized`: no usable credential (401); `presented` when a token was sent but is not valid;
 * - `audience`: an OAuth token pinned to another surface (403 `invalid_audience`);
 * - `scope`: scopes missing (403 `insufficient_scope`): `required` the call's, `kept` those the token holds
 *   besides (an OAuth token steps up without losing them; an API key cannot step up, so none), `missing`.
 */
export type Challenge =
  | { kind: 'unauthorized'; presented: boolean; message: string }
  | { kind: 'audience' }
  | { kind: 'scope'; required: string[]; kept: string[]; missing: string[] };

/**
 * A `WWW-Authenticate: Bearer …` value (RFC 6750 §3, RFC 9728 §5.1 `resource_metadata`), parameters in the
 * given order. Quotes and backslashes in values are escaped as quoted-string requires.
 */
export function bearerChallenge(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}="${v!.replace(/["\\]/g, '\\$&')}"`);
  return parts.length ? `Bearer ${parts.join(', ')}` : 'Bearer';
}

/** A `WWW-Authenticate: Basic` value (RFC 7617): the OAuth server's answer to failed client authentication. */
export const basicChallenge = (realm: string): string => `Basic realm="${realm.replace(/["\\]/g, '\\$&')}"`;

/**
 * The one writer of a surface's Bearer challenges (undefined: the surface sends none for it). `scope` is what a 401 on
 * MCP tells a client to ask for (MCP authorization, "Scope selection strategy"): `mcp:tools` and every scope a tool
 * needs.
 */
export function challengeHeader(
  baseUrl: string,
  surface: SurfaceName,
  c: Challenge,
  scope?: string,
): string | undefined {
  const s = SURFACES[surface];
  const resource_metadata = resourceMetadataUrl(baseUrl, surface);
  if (s.style === 'rest') {
    if (c.kind === 'unauthorized')
      return bearerChallenge({ realm: 'realm' in s ? s.realm : undefined, resource_metadata });
    if (c.kind === 'audience')
      return bearerChallenge({ error: 'invalid_token', error_description: 'audience mismatch' });
    return undefined; // REST answers a missing scope with the envelope alone (details.required)
  }
  if (c.kind === 'unauthorized') {
    return bearerChallenge({
      resource_metadata,
      scope: scope ?? s.scopes.join(' '),
      error: c.presented ? 'invalid_token' : undefined,
      error_description: c.presented ? c.message : undefined,
    });
  }
  if (c.kind === 'audience')
    return bearerChallenge({ error: 'invalid_token', error_description: 'audience mismatch', resource_metadata });
  return bearerChallenge({
    error: 'insufficient_scope',
    scope: [...c.required, ...c.kept].join(' '),
    resource_metadata,
    error_description: `Missing scope: ${c.missing.join(' ')}`,
  });
}
