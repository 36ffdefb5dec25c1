import {
  isJSONRPCRequest, SERVER_INFO_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type InboundClassificationOutcome, type RequestId,
} from '@modelcontextprotocol/server';
import { SERVER_INFO } from './createMcpServer.js';
import { toolAnswerJson } from './toolResult.js';

/** The 2026 revision this server answers (the SDK's `server/discover` lists what it implements). */
export const MODERN_REVISION = '2026-07-28';

/** The MCP request headers, as `classifyInboundRequest` takes them. */
export interface McpRequestHeaders {
  protocolVersionHeader?: string;
  mcpMethodHeader?: string;
  mcpNameHeader?: string;
}

/** A plain `tools/call`: what the fast path needs of it, and the revision whose answer it gets. */
export interface PlainToolCall {
  id: RequestId;
  name: string;
  arguments: Record<string, unknown>;
  /** `legacy` (2025-03-26 … 2025-11-25) or the 2026 revision. */
  revision: 'legacy' | typeof MODERN_REVISION;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const PLAIN_PARAMS = new Set(['name', 'arguments', '_meta']);

/** The methods whose 2026 requests must carry `Mcp-Name` (Streamable HTTP, "Standard Request Headers"). */
const NAMED_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/** Whether a 2026 request carries every standard header its method needs (their values the classifier has checked). */
export function hasStandardHeaders(h: McpRequestHeaders, message: { method: string }): boolean {
  return h.protocolVersionHeader !== undefined && h.mcpMethodHeader !== undefined && (!NAMED_METHODS.has(message.method) || h.mcpNameHeader !== undefined);
}

/**
 * The one `tools/call` of a POST that the router may answer itself, or null when the SDK must serve the POST.
 * Only sufficient conditions, each read from the SDK's public API or the request itself: anything unusual (a
 * batch, a notification, a task or progress request, a header the SDK would refuse, a base64-encoded
 * `Mcp-Name`) goes to the SDK, so every refusal stays the SDK's own.
 * - 2026-07-28: the SDK's classifier (`route`) found a valid envelope whose headers agree with the body, and
 *   the request names the revision, the method and the tool in `MCP-Protocol-Version`, `Mcp-Method` and
 *   `Mcp-Name`: the headers alone route it (the tool is looked up by `Mcp-Name`).
 * - 2025: a request without envelope whose `MCP-Protocol-Version` is absent or one the SDK supports.
 * Both: an `Accept` listing `application/json` and `text/event-stream`, as both revisions require.
 */
export function plainToolCallOf(route: InboundClassificationOutcome, h: McpRequestHeaders, accept: string | undefined, body: unknown): PlainToolCall | null {
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  let revision: PlainToolCall['revision'];
  if (route.kind === 'modern') {
    if (route.classification.revision !== MODERN_REVISION || h.protocolVersionHeader !== MODERN_REVISION || h.mcpMethodHeader !== 'tools/call') return null;
    revision = MODERN_REVISION;
  } else if (route.kind === 'legacy' && route.reason === 'no-claim') {
    if (h.protocolVersionHeader !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(h.protocolVersionHeader)) return null;
    revision = 'legacy';
  } else {
    return null;
  }
  if (!isJSONRPCRequest(body) || body.method !== 'tools/call') return null;
  const params = body.params as Record<string, unknown> | undefined;
  if (!params || typeof params.name !== 'string' || !Object.keys(params).every((k) => PLAIN_PARAMS.has(k))) return null;
  if (params.arguments !== undefined && !isObject(params.arguments)) return null;
  if (revision === MODERN_REVISION && h.mcpNameHeader !== params.name) return null;
  return { id: body.id, name: params.name, arguments: (params.arguments as Record<string, unknown> | undefined) ?? {}, revision };
}

/**
 * The JSON-RPC answer to a plain `tools/call`, as the SDK's server writes it for the revision: a 2025 answer
 * is `{ result, jsonrpc, id }`; a 2026-07-28 result also names the server in its `_meta`
 * (`io.modelcontextprotocol/serverInfo`) and ends with `resultType: "complete"`. `result` is the checked
 * result of `toCheckedToolResult`, which `toolAnswerJson` writes without serializing the output twice.
 */
export function toolCallAnswerJson(id: RequestId, result: CallToolResult, revision: PlainToolCall['revision']): string {
  if (revision === 'legacy') return toolAnswerJson({ result, jsonrpc: '2.0', id });
  result._meta = { ...result._meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  (result as CallToolResult & { resultType: string }).resultType = 'complete';
  return toolAnswerJson({ result, jsonrpc: '2.0', id });
}
