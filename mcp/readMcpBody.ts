import type { Request } from 'express';
import { readLimited } from '../src/readLimited.js';

export type McpBody =
  | { bytes: Buffer; body: unknown }
  | { error: string; status: number; code: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const isJson = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/json';

/**
 * Reads and parses a POST body for /mcp, up to `limit` bytes (the rest is drained). Read here rather than
 * by the transport so that the tool calls inside can be checked for their scopes first (checkToolScopes).
 * A body that is not `application/json` is left unparsed (null) for the transport to refuse with 415.
 */
export async function readMcpBody(req: Request, limit: number): Promise<McpBody> {
  const tooLarge = { error: `Request body is limited to ${limit} bytes`, status: 413, code: 'payload_too_large' };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return tooLarge;
  }
  const { bytes, over } = await readLimited(req, limit);
  if (over) return tooLarge;
  if (!isJson(req.headers['content-type'])) return { bytes, body: null };
  try {
    // RFC 8259 §8.1: JSON is UTF-8; other bytes are a parse error, never text changed by replacement characters
    return { bytes, body: JSON.parse(UTF8.decode(bytes)) };
  } catch {
    return { error: 'Parse error: Invalid JSON', status: 400, code: 'validation_error' };
  }
}
