import { createConnector } from '../../src/agents/connectors.js';
import { createAgentRunWorker } from '../../src/agents/runWorker.js';
import type { Runtime } from '../../src/runtime.js';
import { sql } from '../../db/sql.js';
import { ALL_SCOPES, call, issueKey, type TestServer, type World } from '../helpers/harness.js';

/** Every scope of the world's key plus agent:invoke. */
export const INVOKER_SCOPES = [...ALL_SCOPES, 'agent:invoke'];

export async function addConnector(
  rt: Runtime,
  orgId: string,
  url: string,
  scopes = ['mcp:tools', 'tasks:write', 'tasks:read', 'messages:write', 'messages:read', 'records:read', 'rooms:read'],
) {
  const { connector, secret } = await createConnector(rt.services, {
    organizationId: orgId,
    name: 'Lines to tasks',
    url,
    scopes,
  });
  return { id: connector.id, secret };
}

export async function invokerKey(rt: Runtime, w: World, scopes = INVOKER_SCOPES, userId = w.owner.id) {
  return (await issueKey(rt, { userId, organizationId: w.orgId, scopes })).token;
}

export const startRun = (
  t: TestServer,
  key: string,
  roomId: string,
  connectorId: string,
  input: Record<string, unknown> = { text: 'one' },
) => call(t, 'POST', `/v1/rooms/${roomId}/agent-runs`, { key, body: { connectorId, input } });

export const getRun = (t: TestServer, key: string, roomId: string, runId: string) =>
  call(t, 'GET', `/v1/rooms/${roomId}/agent-runs/${runId}`, { key });

/** One round of the run worker (the invocation included). */
export const invokeDue = (rt: Runtime) => createAgentRunWorker({ services: rt.services }).runOnce();

export async function auditRowsOfRun(rt: Runtime, runId: string) {
  return (
    await sql<{
      actor: string;
      delegatingUserId: string | null;
      agentRunId: string;
      routePattern: string;
      statusCode: number;
      surface: string;
    }>(rt.ds, 'SELECT * FROM "audit_log" WHERE "agentRunId" = ? ORDER BY "id"', [runId])
  ).rows;
}
