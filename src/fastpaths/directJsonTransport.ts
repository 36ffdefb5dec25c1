// Mirrors @modelcontextprotocol/sdk@1.32.2: the checks of `WebStandardStreamableHTTPServerTransport.handlePostRequest`
// and `validateProtocolVersion` (dist/esm/server/webStandardStreamableHttp.js) made before a POST's message is
// dispatched. Paired tests: test/fastpaths/directJsonTransport.test.ts (every request taken here is one the SDK's
// transport accepts and answers alike) and test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage, type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';

/** The request headers the Streamable HTTP transport looks at (lower-case names, as Node gives them). */
export interface McpPostHeaders {
  accept?: string;
  contentType?: string;
  protocolVersion?: string;
}

/**
 * Whether the SDK's transport would dispatch a POST with these headers and may answer it with JSON: an `Accept`
 * listing both `application/json` and `text/event-stream`, a JSON `Content-Type` (the SDK's own media-type
 * parser) and a supported or absent `Mcp-Protocol-Version` (the SDK's own list).
 */
export function jsonAnswerAllowed({ accept, contentType, protocolVersion }: McpPostHeaders): boolean {
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonContentType(contentType ?? null)) return false;
  return protocolVersion === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion);
}

/**
 * The one JSON-RPC request of a POST that the direct transport may answer, or null when the SDK's own
 * Streamable HTTP transport must handle the POST instead.
 *
 * The direct path takes only the common, valid case: a single JSON-RPC request (not a batch, notification
 * or response), with an `Accept` listing both `application/json` and `text/event-stream`, a JSON
 * `Content-Type` and a supported (or absent) `Mcp-Protocol-Version`: the checks the SDK's transport makes
 * before it dispatches a message, made the same way (the SDK's own media-type parser, message schema and
 * version list). Anything else (a batch, a notification, a refusal to word: 406, 415, 400…) goes to the
 * SDK's transport, so every unusual answer is still the SDK's own.
 */
export function directRequestOf(headers: McpPostHeaders, body: unknown): JSONRPCRequest | null {
  if (!jsonAnswerAllowed(headers)) return null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const parsed = JSONRPCMessageSchema.safeParse(body);
  if (!parsed.success || !isJSONRPCRequest(parsed.data)) return null;
  return parsed.data;
}

/**
 * A stateless Streamable HTTP exchange of one JSON-RPC request answered with one JSON body (the
 * transport spec lets a server answer a POST with `application/json` instead of an SSE stream). It
 * implements the SDK's `Transport` interface, so the MCP `Server` (protocol, capabilities, handlers and
 * their errors) runs unchanged on it; what it leaves out is the Web `Request`/`Response` round trip of
 * the SDK's Node transport (a `Request` with its `AbortController` and `Headers`, a `Response` and its
 * body stream per call), which cost a fifth of a tool call's CPU (bench/README.md).
 *
 * Messages the server sends that are not the answer (a notification related to the request) are
 * dropped, as the SDK's transport drops them in JSON mode: a client that wants progress asks with a
 * progress token, and that POST is served by the SDK's transport over SSE.
 */
export class DirectJsonTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private closed = false;
  private settle?: (answer: JSONRPCMessage | null) => void;
  private requestId?: JSONRPCRequest['id'];

  async start(): Promise<void> {}

  /** Delivers the request to the connected server; resolves with its answer, or null once closed first. */
  exchange(request: JSONRPCRequest): Promise<JSONRPCMessage | null> {
    return new Promise((resolve) => {
      this.settle = resolve;
      this.requestId = request.id;
      if (this.closed) return resolve(null);
      this.onmessage?.(request);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id === this.requestId) {
      // let go of the resolver: it holds the settled promise and so the answer, for as long as anything (the
      // server, the response's close listener) holds this transport. Kept, every page answered survived the
      // young generation and was promoted; dropping it cut MCP list_messages' CPU by 18 % (bench/README.md).
      const settle = this.settle;
      this.settle = undefined;
      settle?.(message);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle?.(null);
    this.onclose?.();
  }
}
