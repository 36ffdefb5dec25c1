import { classifyInboundRequest, type InboundLegacyRoute, type InboundModernRoute } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../../src/domain/services.js';
import {
  ACCEPT_IN,
  MCP_METHOD_IN,
  MCP_NAME_IN,
  MCP_PROTOCOL_VERSION_IN,
  REQUEST_ID_HEADER,
} from '../../src/http/headers.js';
import { setOperation } from '../../src/observability/observeRequests.js';
import { auditEndpointRejection } from './auditRejection.js';
import { toolCallsOf } from '../tools/checkToolScopes.js';
import type { Entry } from './door.js';
import { headerOf } from './door.js';
import { echoableId, JSONRPC_INVALID_REQUEST, sendJsonRpcError } from './httpReplies.js';
import { plainToolCallOf, type McpRequestHeaders, type PlainToolCall } from '../tools/plainToolCall.js';
import type { ToolCatalog } from '../tools/toolCatalog.js';

/** A JSON-RPC message (or batch) that agrees with its revision headers, and which leg serves it. */
export interface Message {
  body: unknown;
  mcpHeaders: McpRequestHeaders;
  /** The client asked for progress notifications: the answer is an SSE stream. */
  sse: boolean;
  /** A plain tools/call known by its headers and shape (plainToolCall.ts), else null. */
  plain: PlainToolCall | null;
  /** The SDK classifier's verdict when the message is not plain: a 2025 or a 2026-07-28 request. */
  route: InboundLegacyRoute | InboundModernRoute | null;
  /** The tools/call requests it holds. */
  calls: ReturnType<typeof toolCallsOf>;
}

/**
 * Reads the body of an Entry as a JSON-RPC message against the revision headers (MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name): a message that contradicts them, a malformed envelope, or a batch on a revision
 * without batches is answered and audited here (a promise of null, settled once it is). Also names the request's
 * operation for metrics. A message that passes is returned at once.
 */
export function readMessage(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  entry: Entry,
): Message | Promise<null> {
  const { body } = entry;
  const mcpHeaders: McpRequestHeaders = {
    protocolVersionHeader: headerOf(req, MCP_PROTOCOL_VERSION_IN),
    mcpMethodHeader: headerOf(req, MCP_METHOD_IN),
    mcpNameHeader: headerOf(req, MCP_NAME_IN),
  };
  // JSON unless the client asked for progress notifications, which need the SSE stream
  const sse = wantsProgress(body);
  const plain = sse ? null : plainToolCallOf(mcpHeaders, headerOf(req, ACCEPT_IN), body);
  // Any other: which revision it speaks is the SDK's own classifier's call (the one createMcpHandler runs),
  // made before anything runs, so a refused request is audited here and its tool never looked at.
  const route = plain ? null : classifyInboundRequest({ httpMethod: 'POST', ...mcpHeaders, body });
  if (route?.kind === 'reject') {
    setOperation(res, 'invalid');
    return refuse(services, res, entry, route.httpStatus, ladderErrorCode(route.code), route.code, route.message, {
      data: route.data,
      id: echoableId(body),
    });
  }
  if (Array.isArray(body) && BATCHLESS_REVISIONS.has(mcpHeaders.protocolVersionHeader ?? '')) {
    // JSON-RPC batches left MCP with 2025-06-18; only a 2025-03-26 client may send one
    setOperation(res, 'batch');
    const message = `Invalid Request: protocol revision ${mcpHeaders.protocolVersionHeader} does not allow JSON-RPC batches`;
    return refuse(services, res, entry, 400, 'validation_error', JSONRPC_INVALID_REQUEST, message);
  }
  const calls = toolCallsOf(body);
  setOperation(res, operationOf(body, calls, entry.tools));
  return { body, mcpHeaders, sse, plain, route, calls };
}

/** A message refused before dispatch: audited, then answered as a JSON-RPC error. */
async function refuse(
  services: Services,
  res: ServerResponse,
  { requestId, actor }: Entry,
  statusCode: number,
  errorCode: string,
  rpcCode: number,
  message: string,
  o?: { data?: unknown; id: string | number | null },
): Promise<null> {
  await auditEndpointRejection(services, { requestId, method: 'POST', statusCode, errorCode, actor });
  sendJsonRpcError(res, statusCode, rpcCode, message, { [REQUEST_ID_HEADER]: requestId }, o);
  return null;
}

const wantsProgress = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some(
    (m) => (m as { params?: { _meta?: { progressToken?: unknown } } })?.params?._meta?.progressToken !== undefined,
  );

/**
 * The 2025 revisions that removed JSON-RPC batching (2025-03-26 still has it; 2026-07-28 batches are the
 * classifier's).
 */
const BATCHLESS_REVISIONS = new Set(['2025-06-18', '2025-11-25']);

/** The audit row's error code for a JSON-RPC refusal of the SDK's classifier (MCP 2026-07-28 error codes). */
function ladderErrorCode(code: number): string {
  if (code === -32022) return 'unsupported_protocol_version';
  if (code === -32020) return 'header_mismatch';
  if (code === -32601) return 'not_found';
  return 'validation_error';
}

/** JSON-RPC methods named as themselves in metrics and traces; any other is `other`. */
const RPC_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'subscriptions/listen',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * What a POST to /mcp is, for metrics and traces (bounded, never an argument): the tool of a single
 * `tools/call` (`unknown_tool` for a name the catalog lacks), the JSON-RPC method, or `batch`.
 */
function operationOf(body: unknown, calls: ReturnType<typeof toolCallsOf>, catalog: ToolCatalog): string {
  if (Array.isArray(body)) return 'batch';
  const name = calls[0]?.params.name;
  if (name !== undefined) return catalog.get(name)?.proc.meta.tool.name ?? 'unknown_tool';
  const method = (body as { method?: unknown } | null)?.method;
  return typeof method === 'string' && RPC_METHODS.has(method) ? method : 'other';
}
