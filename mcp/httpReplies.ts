import type { Response } from 'express';
import type { DomainError } from '../src/domain/errors.js';
import { errorEnvelope } from './toolResult.js';

/** JSON-RPC error codes the transport itself answers with (as the SDK's transport does). */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_SERVER_ERROR = -32000;

/**
 * A `WWW-Authenticate: Bearer …` value (RFC 6750 §3, RFC 9728 §5.1 `resource_metadata`). Quotes and
 * backslashes in values are escaped as quoted-string requires.
 */
export function bearerChallenge(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}="${v!.replace(/["\\]/g, '\\$&')}"`);
  return parts.length ? `Bearer ${parts.join(', ')}` : 'Bearer';
}

/** An HTTP-level refusal in the spec's error envelope (2.4), with `X-Request-Id` equal to its requestId. */
export function sendEnvelope(res: Response, err: DomainError, requestId: string, headers: Record<string, string> = {}): void {
  if (err.code === 'service_unavailable') res.set('Retry-After', String(err.details?.retryAfterSeconds ?? 1));
  res.set(headers).set({ 'X-Request-Id': requestId, 'Cache-Control': 'no-store' });
  res.status(err.status).json(errorEnvelope(err, requestId));
}

/** A transport-level refusal as a JSON-RPC error without id, the form the SDK's transport uses. */
export function sendJsonRpcError(res: Response, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.set(headers).set('Cache-Control', 'no-store');
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}
