import { authenticate } from '../src/auth/authenticate.js';
import type { Credentials } from '../src/auth/credentials.js';
import { presentedToken } from '../src/auth/credentials.js';
import type { RateLimiter } from '../src/auth/rateLimit.js';
import type { Actor, AuthenticatedActor } from '../src/domain/actor.js';
import { DomainError } from '../src/domain/errors.js';
import type { Services } from '../src/domain/services.js';
import { toDomainError } from '../src/procedures/index.js';
import { bearerChallenge } from './httpReplies.js';
import { MCP_SCOPE } from './invokeTool.js';

/** A refusal at the door: the error for the envelope and the headers (the challenge) to send with it. */
export interface DoorRefusal {
  error: DomainError;
  headers: Record<string, string>;
  /** Known when the credential was valid but not good for /mcp. */
  actor?: Actor;
}

export interface DoorOptions {
  services: Services;
  rateLimiter: RateLimiter;
  credentials: Credentials;
  clientIp: string;
  /**
   * The `scope` of the 401 challenge: what a client asks for to start (MCP authorization, "Scope selection
   * strategy": clients use it as the authorization request's `scope`). The authorization server grants
   * the part of it the client may have.
   */
  challengeScope?: string;
}

/** Where /mcp's protected-resource metadata lives (RFC 9728 §3.1, CONTRACT §5). */
export const resourceMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-protected-resource/mcp`;

/**
 * Authenticates an HTTP request to /mcp before any JSON-RPC is read (spec 5.5 condition 1, 5.6 audience):
 * - no or bad credential: 401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="mcp:tools …"`
 *   (MCP authorization: the client discovers the authorization server from there, and asks for `scope`); failures count against the client
 *   address's 60 s window, as in the procedure pipeline, so guessing is limited here too;
 * - an OAuth token pinned to another audience: 403 `invalid_audience`, `error="invalid_token"`;
 * - a credential without `mcp:tools`: 403 `insufficient_scope` with the scope challenge.
 * API keys act as `app`; OAuth tokens as their user or agent.
 */
export async function authenticateMcp(o: DoorOptions): Promise<{ actor: AuthenticatedActor } | DoorRefusal> {
  const { services } = o;
  const baseUrl = services.config.baseUrl;
  const resource_metadata = resourceMetadataUrl(baseUrl);
  let actor: AuthenticatedActor;
  try {
    actor = await authenticate(services, o.credentials);
  } catch (err) {
    const error = toDomainError(err);
    if (error.code !== 'unauthorized') return { error, headers: {} };
    const r = await o.rateLimiter.consume(`ip:${o.clientIp}`, services.config.plans.default.rateLimit);
    if (!r.allowed) {
      return {
        error: new DomainError('rate_limited', 'Rate limit exceeded; retry after the window resets', { details: { retryAfterSeconds: r.resetSeconds } }),
        headers: { 'Retry-After': String(r.resetSeconds) },
      };
    }
    const presented = presentedToken(o.credentials) !== null;
    return {
      error,
      headers: {
        'WWW-Authenticate': bearerChallenge({
          resource_metadata, scope: o.challengeScope ?? MCP_SCOPE,
          error: presented ? 'invalid_token' : undefined, error_description: presented ? error.message : undefined,
        }),
      },
    };
  }
  const audience = `${baseUrl}/mcp`;
  if (actor.credential.method === 'oauth_bearer' && actor.audience !== audience) {
    return {
      actor,
      error: new DomainError('invalid_audience', `This token is pinned to ${actor.audience}, not ${audience}`),
      headers: { 'WWW-Authenticate': bearerChallenge({ error: 'invalid_token', error_description: 'audience mismatch', resource_metadata }) },
    };
  }
  if (!actor.scopes.includes(MCP_SCOPE)) return { actor, ...scopeChallenge(baseUrl, actor, [MCP_SCOPE]) };
  return { actor };
}

/**
 * The MCP scope challenge (MCP authorization, "Scope challenge handling"; RFC 6750 §3.1): 403
 * `insufficient_scope` whose `WWW-Authenticate` names the scopes the call needs (`mcp:tools` and the
 * operation's), so a client can ask the user for them. For an OAuth token, which the client can replace
 * by stepping up, the scopes it already holds follow, so the new token does not lose them (the MCP
 * spec's recommended approach); an API key cannot step up, so it is told only what is needed.
 */
export function scopeChallenge(baseUrl: string, actor: Actor, required: string[], error?: DomainError): DoorRefusal {
  const missing = required.filter((s) => !actor.scopes.includes(s));
  const kept = actor.credential.method === 'oauth_bearer' ? actor.scopes.filter((s) => !required.includes(s)) : [];
  return {
    error: error ?? new DomainError('insufficient_scope', `Missing scope: ${missing.join(' ')}`, { details: { required, granted: actor.scopes } }),
    headers: {
      'WWW-Authenticate': bearerChallenge({
        error: 'insufficient_scope', scope: [...required, ...kept].join(' '), resource_metadata: resourceMetadataUrl(baseUrl),
        error_description: `Missing scope: ${missing.join(' ')}`,
      }),
    },
  };
}
