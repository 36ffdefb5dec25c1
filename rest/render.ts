import type { Response } from 'express';
import type { DomainError } from '../src/domain/errors.js';

/** Renders the spec's error envelope (2.4) with the given headers. `requestId` equals `X-Request-Id`. */
export function sendError(res: Response, err: DomainError, requestId: string, headers: Record<string, string> = {}): void {
  // a busy database: nothing was done, retry shortly (RFC 9110 §10.2.3)
  if (err.code === 'service_unavailable') res.set('Retry-After', String(err.details?.retryAfterSeconds ?? 1));
  res.set(headers);
  res.set('X-Request-Id', requestId);
  res.set('Cache-Control', 'no-store');
  res.status(err.status).json({ error: { code: err.code, message: err.message, requestId, details: err.details ?? {} } });
}
