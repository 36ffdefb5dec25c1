import type { ServerResponse } from 'node:http';
import type { DomainError } from '../../src/domain/errors.js';
import { errorEnvelope, retryAfterOf } from '../../src/http/envelope.js';
import {
  CACHE_CONTROL_HEADER,
  CONTENT_LENGTH_HEADER,
  CONTENT_TYPE_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER,
} from '../../src/http/headers.js';

/** JSON-RPC error codes the transport itself answers with (as the SDK's transport does). */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_SERVER_ERROR = -32000;

/** An HTTP-level refusal in the REST error envelope, with `X-Request-Id` equal to its requestId. */
export function sendEnvelope(
  res: ServerResponse,
  err: DomainError,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  // a busy database: retry shortly (a spent window's Retry-After comes with `headers`)
  const retryAfter = err.code === 'service_unavailable' ? retryAfterOf(err, false) : undefined;
  if (retryAfter !== undefined) res.setHeader(RETRY_AFTER, retryAfter);
  setHeaders(res, headers);
  res.setHeader(REQUEST_ID_HEADER, requestId);
  res.setHeader(CACHE_CONTROL_HEADER, 'no-store');
  sendJsonText(res, err.status, errorEnvelope(err, requestId));
}

/**
 * A transport-level refusal as a JSON-RPC error, the form the SDK's transports use: without id, or with the
 * id of the single request it refuses (`echoableId`), and the error's `data` when it has some.
 */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  o: { data?: unknown; id?: string | number | null } = {},
): void {
  setHeaders(res, headers);
  res.setHeader(CACHE_CONTROL_HEADER, 'no-store');
  sendJsonText(res, status, {
    jsonrpc: '2.0',
    error: { code, message, ...(o.data !== undefined && { data: o.data }) },
    id: o.id ?? null,
  });
}

const setHeaders = (res: ServerResponse, headers: Record<string, string>) => {
  for (const k in headers) res.setHeader(k, headers[k]);
};

/**
 * The status and a JSON body, with the headers Express's `res.json` adds (its type with charset, the length): the
 * same bytes whether the request came through Express or straight from the server's listener. A HEAD answer
 * carries the headers only.
 */
function sendJsonText(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader(CONTENT_TYPE_HEADER, 'application/json; charset=utf-8');
  res.setHeader(CONTENT_LENGTH_HEADER, String(Buffer.byteLength(text)));
  if (res.req?.method === 'HEAD') res.end();
  else res.end(text);
}

/** The id an error answer to `body` carries: a single request's string or number id, else null (as the SDK's entry). */
export function echoableId(body: unknown): string | number | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}
