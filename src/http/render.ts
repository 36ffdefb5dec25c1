import type { ServerResponse } from 'node:http';
import type { DomainError } from '../domain/errors.js';
import { API_SECURITY_HEADERS, mergeHeaders } from './apiHeaders.js';
import { errorEnvelope, retryAfterOf } from './envelope.js';
import {
  CACHE_CONTROL_HEADER,
  CONTENT_LENGTH_HEADER,
  CONTENT_TYPE_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER,
} from './headers.js';

/**
 * Sends a JSON answer of the API: the security headers, the given ones, `Cache-Control: no-store`, and the
 * body, written with one `writeHead` (a request pays for each `setHeader` separately, and the API answers
 * carry some twenty headers). Headers set on `res` before are kept.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  const all = mergeHeaders(API_SECURITY_HEADERS, headers);
  all[CACHE_CONTROL_HEADER] = 'no-store';
  all[CONTENT_TYPE_HEADER] = 'application/json; charset=utf-8';
  all[CONTENT_LENGTH_HEADER] = String(Buffer.byteLength(text));
  res.writeHead(status, all);
  res.end(text);
}

/**
 * Renders the error envelope (docs/rest-api.md#responses-and-errors) with the given headers. `requestId` equals
 * `X-Request-Id`.
 */
export function sendError(
  res: ServerResponse,
  err: DomainError,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  const all = mergeHeaders(headers, { [REQUEST_ID_HEADER]: requestId });
  // a busy database: nothing was done, retry shortly (RFC 9110 §10.2.3); the same for a refused body
  const retryAfter = retryAfterOf(err, all[RETRY_AFTER] !== undefined);
  if (retryAfter !== undefined) all[RETRY_AFTER] = retryAfter;
  sendJson(res, err.status, errorEnvelope(err, requestId), all);
}
