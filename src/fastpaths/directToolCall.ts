// Mirrors @modelcontextprotocol/sdk@1.32.2: `Protocol._onrequest` (dist/esm/shared/protocol.js) for a plain
// `tools/call` request, and the checks `JSONRPCRequestSchema` and `CallToolRequestSchema` (dist/esm/types.js) make of
// one before its handler runs. Paired tests: test/fastpaths/directToolCall.test.ts (every request taken here is one
// the SDK's server accepts, and each kind of outcome is answered as the SDK's server answers it, byte for byte) and
// test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { jsonAnswerAllowed, type McpPostHeaders } from './directJsonTransport.js';

/** A `tools/call` the router may answer without an MCP `Server`: the JSON-RPC id, the tool's name and its arguments. */
export interface DirectToolCall {
  id: RequestId;
  name: string;
  arguments: Record<string, unknown>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

const keysWithin = (o: object, allowed: readonly string[]): boolean => {
  for (const k in o) if (!allowed.includes(k)) return false;
  return true;
};

const MESSAGE_KEYS = ['jsonrpc', 'id', 'method', 'params'] as const;
const PARAMS_KEYS = ['name', 'arguments'] as const;

/**
 * The plain `tools/call` of a POST, or null when the MCP server must take the POST (see directRequestOf for the
 * headers). Plain means the common case and nothing else: one JSON-RPC request object (`jsonrpc: "2.0"`, a string
 * or safe-integer id, no other member), whose params hold a string `name` and, optionally, an `arguments` object
 * and nothing more: no `_meta` (progress tokens, related tasks) and no `task`. Every such request passes the SDK's
 * `JSONRPCRequestSchema` and `CallToolRequestSchema`, and their parse hands the handler the same name and
 * arguments (test/fastpaths/directToolCall.test.ts). An `arguments` object with an own `__proto__` member is left
 * to the SDK, whose parse of a record copies members by assignment.
 */
export function directToolCallOf(headers: McpPostHeaders, body: unknown): DirectToolCall | null {
  if (!jsonAnswerAllowed(headers) || !isPlainObject(body) || !keysWithin(body, MESSAGE_KEYS)) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call') return null;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  if (!isPlainObject(params) || !keysWithin(params, PARAMS_KEYS) || typeof params.name !== 'string') return null;
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isPlainObject(args) || Object.hasOwn(args, '__proto__')) return null;
  return { id: id as RequestId, name: params.name, arguments: args };
}

/**
 * What the SDK's protocol layer sends for a request whose handler is `handle` (`Protocol._onrequest`, without
 * sessions or tasks, which a plain call has not): `{ result, jsonrpc, id }` once the handler resolves; for a
 * rejection, a JSON-RPC error whose code is the error's own when it is a safe integer (`McpError`), else
 * -32603, with the error's message and its `data` if it has some; and nothing (null) when the request was
 * aborted (the client went away) before the handler settled.
 */
export async function directAnswer(id: RequestId, signal: AbortSignal, handle: () => Promise<unknown>): Promise<JSONRPCMessage | null> {
  let result: unknown;
  try {
    result = await handle();
  } catch (err) {
    if (signal.aborted) return null;
    const error = err as { code?: unknown; message?: string; data?: unknown };
    return {
      jsonrpc: '2.0', id,
      error: {
        code: Number.isSafeInteger(error.code) ? (error.code as number) : ErrorCode.InternalError,
        message: error.message ?? 'Internal error',
        ...(error.data !== undefined && { data: error.data }),
      },
    };
  }
  if (signal.aborted) return null;
  return { result, jsonrpc: '2.0', id } as JSONRPCMessage;
}
