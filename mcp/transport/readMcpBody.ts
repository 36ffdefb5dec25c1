import type { IncomingMessage } from 'node:http';
import { jsonTextBoundsError } from '../../src/http/inputBounds.js';
import { CONTENT_LENGTH_IN, CONTENT_TYPE_IN, RETRY_AFTER } from '../../src/http/headers.js';
import { BodyRefusedError, BodyTimeoutError, readLimited } from '../../src/readLimited.js';

export type McpBody =
  { bytes: Buffer; body: unknown } | { error: string; status: number; code: string; headers?: Record<string, string> };

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const isJson = (contentType: string | undefined) =>
  (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/json';

/**
 * Reads and parses a POST body for /mcp, up to `limit` bytes (the rest is drained), its structure bounded first
 * as REST's is (src/http/inputBounds.ts: members, nesting). Read here rather than
 * by the transport so that the tool calls inside can be checked for their scopes first (checkToolScopes).
 * A body that is not `application/json` is left unparsed (null) for the transport to refuse with 415. A body
 * that did not arrive in time is a 408, one over its client's limit of bodies in flight a 429; a client gone
 * mid-body rejects with `ClientGoneError` (nobody to answer).
 */
export async function readMcpBody(req: IncomingMessage, limit: number): Promise<McpBody> {
  const tooLarge = { error: `Request body is limited to ${limit} bytes`, status: 413, code: 'payload_too_large' };
  const declared = Number(req.headers[CONTENT_LENGTH_IN]);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return tooLarge;
  }
  let read: Awaited<ReturnType<typeof readLimited>>;
  try {
    read = await readLimited(req, limit);
  } catch (err) {
    if (err instanceof BodyTimeoutError) return { error: err.message, status: 408, code: 'request_timeout' };
    if (err instanceof BodyRefusedError)
      return { error: err.message, status: 429, code: 'rate_limited', headers: { [RETRY_AFTER]: '1' } };
    throw err;
  }
  const { bytes, over } = read;
  if (over) return tooLarge;
  if (!isJson(req.headers[CONTENT_TYPE_IN])) return { bytes, body: null };
  // the structure is bounded before the text is parsed (the SDK's schemas, then the tool's, read all of it); a
  // large body is only ever a few long strings (upload_file's content)
  const bounds = jsonTextBoundsError(bytes);
  if (bounds) return { error: `Parse error: ${bounds.message}`, status: 400, code: 'validation_error' };
  try {
    // RFC 8259 §8.1: JSON is UTF-8; other bytes are a parse error, never text changed by replacement characters
    return { bytes, body: JSON.parse(UTF8.decode(bytes)) };
  } catch {
    return { error: 'Parse error: Invalid JSON', status: 400, code: 'validation_error' };
  }
}
