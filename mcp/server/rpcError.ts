import { boundedForError, clip } from '../../src/http/inputBounds.js';

/**
 * A JSON-RPC error a request handler throws: the SDK's protocol layer answers with its `code`, `message`
 * and `data` as they are. (The v1 SDK's `McpError` puts `MCP error <code>: ` in front of its message, and the
 * SDK's client puts it there once more when it rebuilds the error: a client saw it twice.)
 */
export class RpcError extends Error {
  readonly data?: unknown;

  constructor(
    readonly code: number,
    message: string,
    data?: unknown,
  ) {
    // a message, or its data, may quote the request (an unknown tool's name, a resource URI): never more than a few
    // hundred characters of it
    super(clip(message, 500));
    if (data !== undefined) this.data = boundedForError(data);
    this.name = 'RpcError';
  }
}

/** JSON-RPC codes the MCP server answers with (JSON-RPC 2.0; a resource not found is -32602 since MCP 2026-07-28). */
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
