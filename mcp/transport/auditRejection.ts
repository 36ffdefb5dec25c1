import { recordAudit } from '../../src/auth/audit.js';
import type { Actor } from '../../src/domain/actor.js';
import type { Services } from '../../src/domain/services.js';
import { auditRow } from '../../src/http/auditRow.js';
import { SURFACES } from '../../src/http/surfaces.js';

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
 * Writes the audit row (surface `mcp`) of a request refused at the HTTP or JSON-RPC level, where
 * the procedure pipeline's own audit never ran. A failed write is logged, never turned into a 500. A
 * delegated token's refusal names its agent run, like every other row of the run.
 */
export async function auditRejection(services: Services, r: McpRejection): Promise<void> {
  await recordAudit(services, auditRow({ ...r, surface: 'mcp', units: 0 }, r.actor));
}

/** The row of a request to the endpoint itself (`/mcp`) refused before any tool ran. */
export function auditEndpointRejection(services: Services, r: Omit<McpRejection, 'routePattern'>): Promise<void> {
  return auditRejection(services, { ...r, routePattern: SURFACES.mcp.path });
}
