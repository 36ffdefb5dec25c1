import type { IncomingMessage } from 'node:http';
import { DomainError } from '../src/domain/errors.js';
import { jsonTextBoundsError } from '../src/http/inputBounds.js';
import { BodyRefusedError, BodyTimeoutError, readLimited } from '../src/readLimited.js';
import { CONTENT_LENGTH_IN, CONTENT_TYPE_IN } from '../src/http/headers.js';

/**
 * Reads the raw request body up to `limit` bytes. Over the limit the rest is drained and a 413 is
 * returned as an error value, so the pipeline can still authenticate, audit and answer in the envelope;
 * so are a body that did not arrive in time (408) and one over its client's limit of bodies in flight (429).
 * A client gone mid-body rejects with `ClientGoneError` (nobody to answer).
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ bytes: Buffer } | { error: DomainError }> {
  const declared = Number(req.headers[CONTENT_LENGTH_IN]);
  const tooLarge = () =>
    new DomainError('payload_too_large', `Request body is limited to ${limit} bytes`, { details: { maxBytes: limit } });
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return { error: tooLarge() };
  }
  try {
    const { bytes, over } = await readLimited(req, limit);
    return over ? { error: tooLarge() } : { bytes };
  } catch (err) {
    const error = bodyError(err);
    if (error) return { error };
    throw err;
  }
}

/** The envelope's error for a body that came too slowly or one too many from its client (else undefined). */
export function bodyError(err: unknown): DomainError | undefined {
  if (err instanceof BodyTimeoutError) {
    return new DomainError('request_timeout', err.message, { details: { timeoutMs: err.timeoutMs } });
  }
  if (err instanceof BodyRefusedError) {
    return new DomainError('rate_limited', err.message, {
      details: { reason: 'too_many_pending_bodies', limit: err.limit, retryAfterSeconds: 1 },
    });
  }
  return undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses a JSON object body; empty means `{}`. Errors are 400/415 in the envelope, never a 500. Its structure is
 * bounded before it is parsed (src/http/inputBounds.ts), its values by the pipeline's input step.
 */
export function parseJsonBody(
  req: IncomingMessage,
  bytes: Buffer,
): { value: Record<string, unknown> } | { error: DomainError } {
  if (bytes.length === 0) return { value: {} };
  const type = (req.headers[CONTENT_TYPE_IN] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    return {
      error: new DomainError('unsupported_media_type', 'Request body must be application/json', {
        details: { contentType: type || null },
      }),
    };
  }
  const bounds = jsonTextBoundsError(bytes);
  if (bounds) return { error: bounds };
  let text: string;
  try {
    // RFC 8259 §8.1: JSON is UTF-8; decoding anything else with replacement characters would change the client's text
    text = UTF8.decode(bytes);
  } catch {
    return {
      error: new DomainError('validation_error', 'Request body is not valid UTF-8', {
        details: { reason: 'invalid_utf8' },
      }),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      error: new DomainError('validation_error', 'Request body is not valid JSON', {
        details: { reason: 'malformed_json' },
      }),
    };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return {
      error: new DomainError('validation_error', 'Request body must be a JSON object', {
        details: { reason: 'not_an_object' },
      }),
    };
  }
  return { value: value as Record<string, unknown> };
}
