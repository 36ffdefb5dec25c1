import type { Actor } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import type { Challenge } from '../http/challenge.js';
import { audienceOf, SURFACES, type SurfaceName } from '../http/surfaces.js';

/** Why an actor may not make a call: the error, and the challenge that tells the client what to do. */
export interface Refusal {
  error: DomainError;
  challenge: Challenge;
}

/**
 * The pipeline's authorize step: an OAuth token must be pinned to this surface's audience,
 * and the credential must hold the surface's own scopes (MCP: `mcp:tools`) and the operation's, if any.
 * Undefined when it may. The same function decides for a procedure call and for MCP's door (no operation).
 */
export function authorize(
  surface: SurfaceName,
  baseUrl: string,
  actor: Actor,
  operationScope?: string | null,
): Refusal | undefined {
  const audience = audienceOf(baseUrl, surface);
  if (actor.credential.method === 'oauth_bearer' && actor.audience !== audience) {
    return {
      error: new DomainError('invalid_audience', `This token is pinned to ${actor.audience}, not ${audience}`),
      challenge: { kind: 'audience' },
    };
  }
  const required = [...SURFACES[surface].scopes, ...(operationScope ? [operationScope] : [])];
  const missing = required.filter((s) => !actor.scopes.includes(s));
  if (!missing.length) return undefined;
  // an OAuth token can step up, keeping what it holds; an API key cannot, so it is told only what is needed
  const kept = actor.credential.method === 'oauth_bearer' ? actor.scopes.filter((s) => !required.includes(s)) : [];
  return {
    error: new DomainError('insufficient_scope', `Missing scope: ${missing.join(' ')}`, {
      details: { required, granted: actor.scopes },
    }),
    challenge: { kind: 'scope', required, kept, missing },
  };
}
