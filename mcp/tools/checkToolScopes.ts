import { authorize } from '../../src/auth/authorize.js';
import { refuseBeforeDispatch } from '../../src/auth/pipeline.js';
import type { Actor } from '../../src/domain/actor.js';
import { challengeHeader } from '../../src/http/challenge.js';
import { WWW_AUTHENTICATE } from '../../src/http/headers.js';
import { outcomeHeaders } from '../../src/http/outcomeHeaders.js';
import type { DoorRefusal } from '../transport/authenticateMcp.js';
import { toolCallContext, type ToolCallOptions } from './invokeTool.js';
import type { CatalogEntry, ToolCatalog } from './toolCatalog.js';

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
    (m): m is ToolCallMessage =>
      isObject(m) && m.method === 'tools/call' && isObject(m.params) && typeof m.params.name === 'string',
  );
}

/**
 * The MCP scope challenge must be an HTTP 403, so it is decided before the JSON-RPC messages reach the
 * server, by the pipeline's own `authorize`: for the first `tools/call` whose operation scope the
 * credential lacks, the pipeline's steps before dispatch run for that call (`refuseBeforeDispatch`: it is
 * counted, refused with `insufficient_scope`, or whatever it meets first such as the rate limit, and
 * audited; nothing runs, nothing is charged). Null, at once, when every call may proceed (the common case
 * awaits nothing); otherwise the refusal, once audited. A batch (protocol revisions before 2025-06-18) is
 * refused as a whole. `calls` are the message's (`toolCallsOf`).
 */
export function checkToolScopes(
  calls: readonly ToolCallMessage[],
  actor: Actor,
  catalog: ToolCatalog,
  call: ToolCallOptions,
): Promise<ScopeRefusal | null> | null {
  const baseUrl = call.services.config.baseUrl;
  for (const msg of calls) {
    const entry = catalog.get(msg.params.name);
    if (entry && authorize('mcp', baseUrl, actor, entry.proc.meta.scope)) return refuseCall(entry, msg, call);
  }
  return null;
}

type ScopeRefusal = { refusal: DoorRefusal & { requestId: string } };

/** The refusal of a call whose scope the credential lacks, by the pipeline's steps before dispatch. */
async function refuseCall(
  entry: CatalogEntry,
  msg: ToolCallMessage,
  call: ToolCallOptions,
): Promise<ScopeRefusal | null> {
  const baseUrl = call.services.config.baseUrl;
  const { ctx, input } = toolCallContext(entry.proc, isObject(msg.params.arguments) ? msg.params.arguments : {}, call);
  const error = await refuseBeforeDispatch(ctx, entry.proc.meta, async () => input);
  if (!error) return null; // (cannot be: the same `authorize` refuses it there)
  if (error.status >= 500)
    call.services.log.error(
      { err: error.cause ?? error, requestId: ctx.requestId, tool: entry.proc.meta.tool.name },
      'tool call failed',
    );
  const headers = outcomeHeaders(ctx.out, baseUrl, 'mcp');
  if (error.code === 'insufficient_scope' && ctx.out.challenge)
    headers[WWW_AUTHENTICATE] = challengeHeader(baseUrl, 'mcp', ctx.out.challenge)!;
  return { refusal: { error, headers, requestId: ctx.requestId } };
}
