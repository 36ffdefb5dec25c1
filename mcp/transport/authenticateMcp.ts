import { authenticateRequest } from '../../src/auth/authenticate.js';
import { authorize } from '../../src/auth/authorize.js';
import type { Credentials } from '../../src/auth/credentials.js';
import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Actor, AuthenticatedActor } from '../../src/domain/actor.js';
import type { DomainError } from '../../src/domain/errors.js';
import type { Services } from '../../src/domain/services.js';
import { challengeHeader } from '../../src/http/challenge.js';
import { RETRY_AFTER, WWW_AUTHENTICATE } from '../../src/http/headers.js';
import { newResponseState } from '../../src/procedures/context.js';
import { toDomainError } from '../../src/procedures/index.js';

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

/**
 * The door of /mcp, before any JSON-RPC is read: the pipeline's own first two steps (src/auth/pipeline.ts)
 * for the surface, without an operation, so MCP's HTTP-level refusals are decided by the same functions:
 * - no or bad credential (`authenticateRequest`): 401 with `WWW-Authenticate: Bearer resource_metadata="…",
 *   scope="mcp:tools …"` (MCP authorization: the client discovers the authorization server from there, and
 *   asks for `scope`); a refused credential counts against the client address's 60 s window, past which
 *   429 `rate_limited` with `Retry-After`;
 * - an OAuth token pinned to another audience (`authorize`): 403 `invalid_audience`, `error="invalid_token"`;
 * - a credential without `mcp:tools` (`authorize`): 403 `insufficient_scope` with the scope challenge.
 * API keys act as `app`; OAuth tokens as their user or agent.
 */
export async function authenticateMcp(o: DoorOptions): Promise<{ actor: AuthenticatedActor } | DoorRefusal> {
  const baseUrl = o.services.config.baseUrl;
  const out = newResponseState();
  let actor: AuthenticatedActor;
  try {
    actor = await authenticateRequest(o, out, 'refused_credential');
  } catch (err) {
    const error = toDomainError(err);
    const headers: Record<string, string> = {};
    if (out.retryAfter !== undefined) headers[RETRY_AFTER] = String(out.retryAfter);
    if (out.challenge) headers[WWW_AUTHENTICATE] = challengeHeader(baseUrl, 'mcp', out.challenge, o.challengeScope)!;
    return { error, headers };
  }
  const refusal = authorize('mcp', baseUrl, actor);
  if (!refusal) return { actor };
  return {
    actor,
    error: refusal.error,
    headers: { [WWW_AUTHENTICATE]: challengeHeader(baseUrl, 'mcp', refusal.challenge)! },
  };
}
