import {
  classifyInboundRequest,
  CLIENT_INFO_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type RequestId,
} from '@modelcontextprotocol/server';
import equal from 'fast-deep-equal';
import { SERVER_INFO } from '../server/createMcpServer.js';
import type { ToolOutcome } from './invokeTool.js';
import { commonToolResultJson, toCheckedToolResult } from './toolResult.js';

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

/**
 * Whether a 2026 request carries every standard header its method needs, `Mcp-Name` plainly equal to the body's
 * name or URI (the classifier has compared the others with the body). Otherwise the SDK's entry decides, and
 * refuses a mismatch before any tool is looked at, even one the credential may not call.
 */
export function hasStandardHeaders(
  h: McpRequestHeaders,
  message: { method: string; params?: Record<string, unknown> },
): boolean {
  if (h.protocolVersionHeader === undefined || h.mcpMethodHeader === undefined) return false;
  if (!NAMED_METHODS.has(message.method)) return true;
  const named = message.params?.name ?? message.params?.uri;
  return h.mcpNameHeader !== undefined && h.mcpNameHeader === named;
}

const TOP_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const isRequestId = (id: unknown): id is RequestId => typeof id === 'string' || Number.isSafeInteger(id);

/**
 * The SDK classifier's verdicts on the 2026 envelopes (`_meta`) seen under the standard headers of a plain
 * `tools/call`, found by value (`fast-deep-equal`, cheaper than a JSON key) among those of the same client (its
 * `clientInfo` name and version): a client sends the same envelope with every request, and the verdict depends on
 * nothing else of a request of this shape. Each is kept as a copy of its own (nothing the request does later changes
 * it). Bounded: a few envelopes a client, the oldest dropped first, and all of them dropped past a total, so that a
 * client sending endless envelopes only renews them.
 */
const envelopeVerdicts = new Map<string, { meta: unknown; ok: boolean }[]>();
let envelopesKept = 0;
const ENVELOPES_MAX = 256;
const ENVELOPES_PER_CLIENT_MAX = 8;

/** What the envelopes of one client share: its `clientInfo` name and version, as stated (any JSON). */
function clientKeyOf(meta: Record<string, unknown>): string {
  const info = meta[CLIENT_INFO_META_KEY];
  return isObject(info) ? `${String(info.name)}\0${String(info.version)}` : '';
}

function validModernEnvelope(meta: Record<string, unknown>): boolean {
  const key = clientKeyOf(meta);
  const seen = envelopeVerdicts.get(key);
  if (seen) for (const s of seen) if (equal(s.meta, meta)) return s.ok;
  const ok = classifyEnvelope(meta);
  if (envelopesKept >= ENVELOPES_MAX) {
    envelopeVerdicts.clear();
    envelopesKept = 0;
  }
  const kept = envelopeVerdicts.get(key) ?? [];
  if (kept.length >= ENVELOPES_PER_CLIENT_MAX) kept.shift();
  else envelopesKept++;
  kept.push({ meta: structuredClone(meta), ok });
  envelopeVerdicts.set(key, kept);
  return ok;
}

/** Whether the SDK's classifier takes a plain 2026 `tools/call` with this envelope as a 2026-07-28 request. */
function classifyEnvelope(meta: Record<string, unknown>): boolean {
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: MODERN_REVISION,
    mcpMethodHeader: 'tools/call',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {}, _meta: meta } },
  });
  return (
    route.kind === 'modern' && route.messageKind === 'request' && route.classification.revision === MODERN_REVISION
  );
}

/**
 * The one `tools/call` of a POST that the router may answer itself, or null when the POST goes the general
 * way (the SDK's classifier, then the SDK's server). Only sufficient conditions, so that every refusal stays
 * the SDK's own: a single JSON-RPC request (`jsonrpc`, an id, `method`, `params` and nothing else) calling a
 * tool by name with object arguments, and an `Accept` listing `application/json` and `text/event-stream`, as
 * both revisions require. Then, by the revision the headers name:
 * - 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and a plain `Mcp-Name` equal to the body's: the headers
 *   route it before anything else is read; the `_meta` envelope gets the SDK classifier's verdict (cached).
 * - 2025 (no or a 2025 `MCP-Protocol-Version`): no `_meta` at all, hence no envelope claim: the spec's
 *   definition of a 2025 request, which the SDK classifies `legacy`/`no-claim`.
 * Anything else (a batch, a notification, progress, a task, a base64 `Mcp-Name` …) goes the general way.
 * test/mcp/plainToolCall.test.ts holds every request taken here to the SDK classifier's own verdict.
 */
export function plainToolCallOf(h: McpRequestHeaders, accept: string | undefined, body: unknown): PlainToolCall | null {
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !isRequestId(body.id)) return null;
  for (const k in body) if (!TOP_KEYS.has(k)) return null;
  const params = body.params;
  if (!isObject(params) || typeof params.name !== 'string') return null;
  for (const k in params) if (!PLAIN_PARAMS.has(k)) return null;
  if (params.arguments !== undefined && !isObject(params.arguments)) return null;
  const call = {
    id: body.id,
    name: params.name,
    arguments: (params.arguments as Record<string, unknown> | undefined) ?? {},
  };
  const version = h.protocolVersionHeader;
  if (version === MODERN_REVISION) {
    if (
      h.mcpMethodHeader !== 'tools/call' ||
      h.mcpNameHeader !== params.name ||
      !isObject(params._meta) ||
      !validModernEnvelope(params._meta)
    )
      return null;
    return { ...call, revision: MODERN_REVISION };
  }
  if (params._meta !== undefined || (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
    return null;
  return { ...call, revision: 'legacy' };
}

/** The members a 2026-07-28 result adds, in JSON: the server's name in `_meta`, and `resultType` last. */
const MODERN_META_TAIL = `,${JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO }).slice(1, -1)}`;
const MODERN_TAIL = ',"resultType":"complete"';

/**
 * The JSON-RPC answer to a plain `tools/call`, as the SDK's server writes it for the revision: a 2025 answer
 * is `{ result, jsonrpc, id }`; a 2026-07-28 result also names the server in its `_meta`
 * (`io.modelcontextprotocol/serverInfo`) and ends with `resultType: "complete"`. The result is
 * `toCheckedToolResult`'s, written in one pass for a common success (`commonToolResultJson`).
 */
export function toolCallAnswerJson(id: RequestId, outcome: ToolOutcome, revision: PlainToolCall['revision']): string {
  const modern = revision === MODERN_REVISION;
  const common = commonToolResultJson(outcome, modern ? MODERN_META_TAIL : '', modern ? MODERN_TAIL : '');
  if (common !== null) return `{"result":${common},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
  const result = toCheckedToolResult(outcome);
  if (modern) {
    result._meta = { ...result._meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
    (result as CallToolResult & { resultType: string }).resultType = 'complete';
  }
  return JSON.stringify({ result, jsonrpc: '2.0', id });
}
