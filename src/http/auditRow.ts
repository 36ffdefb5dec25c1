import type { AuditInput } from '../contract.js';
import type { Actor } from '../domain/actor.js';

/** What an answer's audit row says besides who asked. */
export interface AuditFacts {
  requestId: string;
  surface: 'rest' | 'mcp';
  /** HTTP method, or `TOOL` for an MCP tool call. */
  method: string;
  /** The route template or tool name; `(unmatched)`, `(unknown tool)` for what named none. */
  routePattern: string;
  statusCode: number;
  errorCode: string | null;
  /** Units charged, net of refunds. */
  units: number;
}

/**
 * The one builder of an audit row: the facts of the answer and the actor, if the credential was valid
 * (its kind, credential, scopes, organization and user; the delegating user and run of an agent). Never a
 * secret: only identifiers.
 */
export function auditRow(f: AuditFacts, a: Actor | undefined): AuditInput {
  return {
    requestId: f.requestId,
    surface: f.surface,
    method: f.method,
    routePattern: f.routePattern,
    statusCode: f.statusCode,
    authMethod: a?.credential.method ?? null,
    actor: a?.kind ?? null,
    delegatingUserId: a?.kind === 'agent' ? a.userId : null,
    scopes: a?.scopes ?? [],
    organizationId: a?.organizationId ?? null,
    userId: a?.userId ?? null,
    apiKeyId: a?.credential.method === 'api_key' ? a.credential.id : null,
    tokenId: a?.credential.method === 'oauth_bearer' ? a.credential.id : null,
    units: f.units,
    errorCode: f.errorCode,
    agentRunId: a?.agentRunId ?? null,
  };
}
