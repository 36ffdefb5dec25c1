import type { JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../src/domain/actor.js';
import { invokeTool, MCP_SCOPE, type ToolCallOptions } from './invokeTool.js';
import type { ToolCatalog } from './toolCatalog.js';
import { scopeChallenge, type DoorRefusal } from './authenticateMcp.js';
import { toToolResult } from './toolResult.js';

interface ToolCallMessage {
  id?: string | number;
  method: 'tools/call';
  params: { name: string; arguments?: Record<string, unknown> };
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The `tools/call` requests of a POST body (one message or a batch). */
export function toolCallsOf(body: unknown): ToolCallMessage[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter(
    (m): m is ToolCallMessage => isObject(m) && m.method === 'tools/call' && isObject(m.params) && typeof m.params.name === 'string',
  );
}

/**
 * The MCP scope challenge must be an HTTP 403, so it is decided before the JSON-RPC messages reach the
 * server: the first `tools/call` whose operation scope the credential lacks is run through the procedure
 * pipeline anyway (`invokeTool`), which refuses it with `insufficient_scope` (or whatever it meets first,
 * such as the rate limit) and writes its audit row. Null when every call may proceed. A batch (protocol
 * revisions before 2025-06-18) is refused as a whole.
 */
export async function checkToolScopes(
  body: unknown, actor: Actor, catalog: ToolCatalog, call: ToolCallOptions,
): Promise<{ refusal: DoorRefusal & { requestId: string } } | { answer: JSONRPCResponse } | null> {
  for (const msg of toolCallsOf(body)) {
    const entry = catalog.get(msg.params.name);
    const scope = entry?.proc.meta.scope;
    if (!entry || !scope || actor.scopes.includes(scope)) continue;
    const outcome = await invokeTool(entry.proc, isObject(msg.params.arguments) ? msg.params.arguments : {}, call);
    // Scopes are fixed per credential, so this cannot succeed; if it did, the call ran: answer it, never run it twice.
    if (outcome.ok) return { answer: { jsonrpc: '2.0', id: msg.id ?? 0, result: toToolResult(outcome) } };
    const refusal = outcome.error.code === 'insufficient_scope'
      ? scopeChallenge(call.services.config.baseUrl, actor, [MCP_SCOPE, scope], outcome.error)
      : { error: outcome.error, headers: outcome.out.headers };
    return { refusal: { ...refusal, headers: { ...outcome.out.headers, ...refusal.headers }, requestId: outcome.requestId } };
  }
  return null;
}
