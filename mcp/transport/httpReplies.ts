import type { Response } from 'express';
import type { DomainError } from '../../src/domain/errors.js';
import { errorEnvelope, retryAfterOf } from '../../src/http/envelope.js';
import { CACHE_CONTROL_HEADER, REQUEST_ID_HEADER, RETRY_AFTER } from '../../src/http/headers.js';

/** JSON-RPC error codes the transport itself answers with (as the SDK's transport does). */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_SERVER_ERROR = -32000;

/** An HTTP-level refusal in the REST error envelope, with `X-Request-Id` equal to its requestId. */
export function sendEnvelope(
  res: Response,
  err: DomainError,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  // a busy database: retry shortly (a spent window's Retry-After comes with `headers`)
  const retryAfter = err.code === 'service_unavailable' ? retryAfterOf(err, false) : undefined;
  if (retryAfter !== undefined) res.set(RETRY_AFTER, retryAfter);
  res.set(headers).set({ [REQUEST_ID_HEADER]: requestId, [CACHE_CONTROL_HEADER]: 'no-store' });
  res.status(err.status).json(errorEnvelope(err, requestId));
}

/**
 * A transport-level refusal as a JSON-RPC error, the form the SDK's transports use: without id, or with the
 * id of the single request it refuses (`echoableId`), and the error's `data` when it has some.
 */
export function sendJsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  o: { data?: unknown; id?: string | number | null } = {},
): void {
  res.set(headers).set(CACHE_CONTROL_HEADER, 'no-store');
  res.status(status).json({
    jsonrpc: '2.0',
    error: { code, message, ...(o.data !== undefined && { data: o.data }) },
    id: o.id ?? null,
  });
}

/** The id an error answer to `body` carries: a single request's string or number id, else null (as the SDK's entry). */
export function echoableId(body: unknown): string | number | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}
