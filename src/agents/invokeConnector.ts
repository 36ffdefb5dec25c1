import { randomUUID } from 'node:crypto';
import type { AgentConnector, AgentRun, Room } from '../../db/entities/index.js';
import type { ResolvedDeliveryDeps } from '../webhooks/deliveryDeps.js';
import { classifyAttempt } from '../webhooks/retryPolicy.js';
import { decryptSecret } from '../webhooks/secretBox.js';
import { signatureHeader } from '../webhooks/signing.js';
import { checkOutboundUrl, UrlRefusedError } from '../outbound/ssrfGuard.js';
import type { DelegatedToken } from './delegatedToken.js';
import {
  AGENT_RUN_ID_HEADER,
  CONTENT_TYPE_HEADER,
  USER_AGENT_HEADER,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TYPE_HEADER,
} from '../http/headers.js';

/** The event type an invocation is signed as (`Svc-Webhook-Type`); not in the event catalog, never fired by a write. */
export const INVOCATION_TYPE = 'agent.run.invoke';
export const INVOCATION_USER_AGENT = 'Svc-Agent/1.0';
/**
 * How long a connector may take to answer an invocation (besides 5 s to connect), at most; less when the lease is
 * short.
 */
export const INVOCATION_RESPONSE_MS = 30_000;

/** What one invocation attempt decided. */
export type InvocationOutcome =
  | { kind: 'succeeded'; output: unknown; statusCode: number }
  | { kind: 'accepted'; statusCode: number }
  | { kind: 'failed'; error: string; statusCode: number | null }
  | { kind: 'retry'; error: string; statusCode: number | null }
  | { kind: 'aborted' };

/** The invocation body: the run, its room, and the delegated token the connector works with. */
export function invocationBody(
  run: AgentRun,
  room: Pick<Room, 'id' | 'name'>,
  token: DelegatedToken,
  baseUrl: string,
): Buffer {
  return Buffer.from(
    JSON.stringify({
      type: INVOCATION_TYPE,
      run: {
        id: run.id,
        roomId: run.roomId,
        organizationId: run.organizationId,
        connectorId: run.connectorId,
        delegatingUserId: run.userId,
        input: run.input,
        attempt: run.attempts,
        createdAt: run.createdAt,
        deadlineAt: run.deadlineAt,
      },
      room: { id: room.id, name: room.name },
      delegation: {
        accessToken: token.accessToken,
        tokenType: 'Bearer',
        expiresAt: token.expiresAt,
        scopes: token.scopes,
        resource: token.resource,
        mcpUrl: `${baseUrl}/mcp`,
        completeTool: 'complete_agent_run',
      },
    }),
  );
}

const MAX_ERROR = 500;
const clip = (s: string) => (s.length > MAX_ERROR ? `${s.slice(0, MAX_ERROR)}…` : s);

/**
 * Reads a connector's 2xx answer: `{status:"succeeded", output}`, `{status:"failed", error}`, or 202 /
 * `{status:"accepted"}` (it will call complete_agent_run later). Anything else fails the run with a
 * readable error; nothing of the answer is stored then.
 */
export function interpretAnswer(statusCode: number, text: string | null): InvocationOutcome {
  const body = (text ?? '').trim();
  if (statusCode === 202 && !body) return { kind: 'accepted', statusCode };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return {
      kind: 'failed',
      statusCode,
      error:
        "connector_answer_invalid: the connector's answer is not JSON {status, output} (at most 2 KB; larger outputs go through complete_agent_run)",
    };
  }
  const p = parsed as { status?: unknown; output?: unknown; error?: unknown } | null;
  if (p && typeof p === 'object' && !Array.isArray(p)) {
    if (p.status === 'succeeded') return { kind: 'succeeded', output: p.output ?? null, statusCode };
    if (p.status === 'failed')
      return {
        kind: 'failed',
        statusCode,
        error: clip(`connector_failed: ${typeof p.error === 'string' ? p.error : 'the connector reported a failure'}`),
      };
    if (p.status === 'accepted' || p.status === 'running') return { kind: 'accepted', statusCode };
  }
  return {
    kind: 'failed',
    statusCode,
    error: 'connector_answer_invalid: the connector answered JSON without status "succeeded", "failed" or "accepted"',
  };
}

/**
 * One invocation attempt: checks the endpoint again against the SSRF guard (pinning the checked address),
 * signs the body with the connector's secret as a webhook is signed (`Svc-Webhook-Timestamp`,
 * `Svc-Webhook-Signature`; `Svc-Webhook-Id` is the run id, the connector's deduplication key), POSTs it
 * without following redirects, and classifies the answer like a webhook attempt. Never throws for
 * the connector's sake.
 */
export async function invokeConnector(
  deps: ResolvedDeliveryDeps,
  connector: AgentConnector,
  body: Buffer,
  runId: string,
  signal?: AbortSignal,
): Promise<InvocationOutcome> {
  let secret: string;
  try {
    secret = decryptSecret(deps.key, connector.secretEnc);
  } catch {
    return {
      kind: 'failed',
      statusCode: null,
      error: "secret_unreadable: the connector's signing secret cannot be decrypted",
    };
  }
  let target;
  try {
    target = await checkOutboundUrl(connector.url, deps.policy);
  } catch (err) {
    if (!(err instanceof UrlRefusedError)) throw err;
    if (err.reason === 'unresolvable')
      return { kind: 'retry', statusCode: null, error: "dns: the connector's host does not resolve" };
    return {
      kind: 'failed',
      statusCode: null,
      error: "ssrf_refused: the connector's endpoint points into an internal network",
    };
  }
  const now = deps.now();
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers = {
    [CONTENT_TYPE_HEADER]: 'application/json',
    [USER_AGENT_HEADER]: INVOCATION_USER_AGENT,
    [WEBHOOK_ID_HEADER]: runId,
    [WEBHOOK_DELIVERY_HEADER]: randomUUID(),
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: signatureHeader({ current: secret, next: null }, timestamp, body),
    [WEBHOOK_TYPE_HEADER]: INVOCATION_TYPE,
    [AGENT_RUN_ID_HEADER]: runId,
  };
  const r = await deps.sender({ target: target!, headers, body, timeouts: deps.timeouts, signal });
  if (r.error === 'aborted') return { kind: 'aborted' };
  if (r.statusCode !== null && r.statusCode >= 300 && r.statusCode < 400) {
    return {
      kind: 'failed',
      statusCode: r.statusCode,
      error: `redirect_not_followed: the connector answered ${r.statusCode}`,
    };
  }
  const verdict = classifyAttempt(r.statusCode, r.error);
  if (verdict === 'success') return interpretAnswer(r.statusCode!, r.body);
  const what =
    r.statusCode !== null
      ? `the connector answered ${r.statusCode}`
      : `${r.errorClass ?? r.error}: no answer from the connector`;
  return verdict === 'retry'
    ? { kind: 'retry', statusCode: r.statusCode, error: what }
    : { kind: 'failed', statusCode: r.statusCode, error: what };
}
