import { ServerResponse } from 'node:http';
import {
  CONTENT_SECURITY_POLICY_HEADER,
  CONTENT_TYPE_OPTIONS_HEADER,
  FRAME_OPTIONS_HEADER,
  REFERRER_POLICY_HEADER,
  STRICT_TRANSPORT_SECURITY_HEADER,
} from './headers.js';

/** Security headers of every /v1 and /mcp answer (OWASP REST Security Cheat Sheet). */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  [STRICT_TRANSPORT_SECURITY_HEADER]: 'max-age=31536000; includeSubDomains',
  [CONTENT_TYPE_OPTIONS_HEADER]: 'nosniff',
  [FRAME_OPTIONS_HEADER]: 'DENY',
  [CONTENT_SECURITY_POLICY_HEADER]: "default-src 'none'; frame-ancestors 'none'",
  [REFERRER_POLICY_HEADER]: 'no-referrer',
};

/**
 * One new headers object holding the given sets, later sets winning. Copied key by key: V8's object
 * spread of a second multi-key object into a literal (`{ ...a, ...b }`) takes a slow path, which for an answer's
 * headers costs more than Node's own handling of them (bench/README.md).
 */
export function mergeHeaders(...sets: Readonly<Record<string, string>>[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const set of sets) for (const k in set) merged[k] = set[k];
  return merged;
}

const PENDING = Symbol('svc.pendingHeaders');
type WithPending = ServerResponse & { [PENDING]?: Record<string, string> };

/**
 * Headers to send with the response, given to its `writeHead` call instead of a `setHeader` each: for
 * answers whose `writeHead` another library makes (the MCP SDK's transport). Node takes a headers object
 * passed to a `writeHead` with no header set before it in one go; every header set before costs a
 * `setHeader` call, and makes `writeHead` merge its own headers one `setHeader` at a time. Returns the
 * object, which may still be filled until the headers are written; headers the writer names win.
 *
 * The response gets one shared function as its own `writeHead` (Node's again from its first call on) and the headers
 * under a symbol: not a closure per response, which kept every response and all it referred to alive through the
 * young generation's collections into the old one (bench/README.md).
 */
export function headersAtWriteHead(
  res: ServerResponse,
  initial: Readonly<Record<string, string>>,
): Record<string, string> {
  const pending = mergeHeaders(initial);
  (res as WithPending)[PENDING] = pending;
  res.writeHead = writeHeadWithPending as ServerResponse['writeHead'];
  return pending;
}

const { writeHead } = ServerResponse.prototype;

/**
 * `res.writeHead(status, given)` for a writer whose headers are spelled as the pending ones are (the constants of
 * headers.ts) and that set none before: the pending headers and `given` (winning) in one object, without the general
 * merge's case-folding. With a header set before (CORS's, say), or nothing pending, it is the general `writeHead`.
 */
export function writeHeadAtOnce(
  res: ServerResponse,
  status: number,
  given: Readonly<Record<string, string | number>>,
): ServerResponse {
  const pending = (res as WithPending)[PENDING];
  if (!pending || res.getHeaderNames().length) return res.writeHead(status, given);
  (res as WithPending)[PENDING] = undefined;
  res.writeHead = writeHead;
  const all: Record<string, string | number> = pending;
  for (const k in given) all[k] = given[k];
  return writeHead.call(res, status, all);
}

function writeHeadWithPending(this: WithPending, status: number, ...rest: unknown[]): ServerResponse {
  const pending = this[PENDING]!;
  this[PENDING] = undefined;
  this.writeHead = writeHead;
  const last = rest[rest.length - 1];
  const given = last && typeof last === 'object' ? (last as Record<string, unknown> | unknown[]) : undefined;
  if (Array.isArray(given)) {
    // raw header pairs: rare, and not worth a fast path
    for (const k in pending) if (!this.hasHeader(k)) this.setHeader(k, pending[k]);
    return writeHead.apply(this, [status, ...rest] as Parameters<typeof writeHead>);
  }
  const named = new Set(Object.keys(given ?? {}).map((k) => k.toLowerCase()));
  const merged: Record<string, unknown> = {};
  for (const k in pending) if (!named.has(k.toLowerCase()) && !this.hasHeader(k)) merged[k] = pending[k];
  if (given) for (const k in given) merged[k] = (given as Record<string, unknown>)[k];
  return writeHead.apply(this, [status, ...(given ? rest.slice(0, -1) : rest), merged] as unknown as Parameters<
    typeof writeHead
  >);
}
