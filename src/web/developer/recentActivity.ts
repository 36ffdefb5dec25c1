import { recentAuditOfUser } from '../../auth/audit.js';
import type { ApiKey } from '../../domain/apiKeys.js';
import { clientNamesOfTokens } from '../../oauth/userGrants.js';
import { connectorNamesOfRuns } from '../../agents/connectorNames.js';
import type { Services } from '../../domain/services.js';
import type { OrgChoice } from './developerAccess.js';

/** Audit rows shown in "Recent API activity". */
export const ACTIVITY_SHOWN = 20;

/** One /v1 or MCP request of the user, as the page shows it: never a secret (audit rows hold none). */
export interface ActivityRow {
  at: string;
  surface: 'rest' | 'mcp';
  method: string;
  route: string;
  statusCode: number;
  errorCode: string | null;
  /**
   * `API key “ci” (svc_live_…abcd)`, `App “X” (OAuth)`, `Agent “Y” (OAuth)`, `Agent connector “Z” (run …)` or
   * `Unknown credential`.
   */
  via: string;
  context: string;
  units: number;
}

/**
 * The user's recent API activity from the audit log: only rows whose `userId`
 * is the user (their keys, and the apps and agents acting for them), newest first. Credentials are named
 * by the key's name and prefix…last 4 or the OAuth client's name.
 */
export async function listRecentActivity(
  s: Services,
  userId: string,
  keys: ApiKey[],
  orgs: OrgChoice[],
): Promise<ActivityRow[]> {
  const m = s.ds.manager;
  const rows = await recentAuditOfUser(s, userId, ACTIVITY_SHOWN);
  const keyById = new Map(keys.map((k) => [k.id, k]));
  const clientOfToken = await clientNamesOfTokens(
    m,
    rows.map((r) => r.tokenId).filter((x): x is string => !!x),
  );
  const connectorOfRun = await connectorNamesOfRuns(
    m,
    rows.map((r) => r.agentRunId).filter((x): x is string => !!x),
  );
  const orgName = new Map(orgs.map((o) => [o.id, o.name]));
  return rows.map((r) => {
    let via = 'Unknown credential';
    const key = r.apiKeyId ? keyById.get(r.apiKeyId) : undefined;
    const connector = r.agentRunId ? connectorOfRun.get(r.agentRunId) : undefined;
    if (key) via = `API key “${key.name}” (${key.prefix}…${key.last4})`;
    else if (connector) via = `Agent connector “${connector}” (run ${r.agentRunId})`;
    else if (r.tokenId)
      via = clientOfToken.has(r.tokenId)
        ? `${r.actor === 'agent' ? 'Agent' : 'App'} “${clientOfToken.get(r.tokenId)}” (OAuth)`
        : `${r.actor === 'agent' ? 'An agent' : 'An app'} no longer connected (OAuth)`;
    return {
      at: r.createdAt,
      surface: r.surface,
      method: r.method,
      route: r.routePattern,
      statusCode: r.statusCode,
      errorCode: r.errorCode,
      via,
      context: r.organizationId ? (orgName.get(r.organizationId) ?? r.organizationId) : 'Personal',
      units: r.units,
    };
  });
}
