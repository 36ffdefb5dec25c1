import { writeAudit } from '../src/auth/audit.js';
import type { Actor } from '../src/domain/actor.js';
import type { Services } from '../src/domain/services.js';

/** A request /mcp refused before any procedure ran (no credential, bad Origin, wrong method, unknown tool …). */
export interface McpRejection {
  requestId: string;
  /** HTTP method, or `TOOL` for a tools/call that named no tool. */
  method: string;
  /** `/mcp`, or `(unknown tool)`. */
  routePattern: string;
  statusCode: number;
  errorCode: string;
  actor?: Actor;
}

/**
 * Writes the audit row (spec 5.7, surface `mcp`) of a request refused at the HTTP or JSON-RPC level, where
 * the procedure pipeline's own audit never ran. A failed write is logged, never turned into a 500.
 */
export async function auditRejection(services: Services, r: McpRejection): Promise<void> {
  const a = r.actor;
  try {
    await writeAudit(services, {
      requestId: r.requestId, surface: 'mcp', method: r.method, routePattern: r.routePattern, statusCode: r.statusCode,
      authMethod: a?.credential.method ?? null, actor: a?.kind ?? null, delegatingUserId: a?.kind === 'agent' ? a.userId : null,
      scopes: a?.scopes ?? [], organizationId: a?.organizationId ?? null, userId: a?.userId ?? null,
      apiKeyId: a?.credential.method === 'api_key' ? a.credential.id : null,
      tokenId: a?.credential.method === 'oauth_bearer' ? a.credential.id : null, units: 0, errorCode: r.errorCode,
    });
  } catch (err) {
    services.log.error({ err, requestId: r.requestId }, 'audit write failed');
  }
}
