import type { ResponseState } from '../contract.js';
import { challengeHeader } from './challenge.js';
import type { SurfaceName } from './surfaces.js';

/** The 60 s window's headers, in the order they are sent. */
export const RATE_LIMIT_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Svc-RateLimit-Scope',
] as const;
/** The monthly unit balance's headers, in the order they are sent. */
export const UNIT_HEADERS = [
  'Svc-Api-Units-Limit',
  'Svc-Api-Units-Remaining',
  'Svc-Api-Units-Used',
  'Svc-Api-Units-Cost',
  'Svc-Api-Units-Reset',
] as const;
export const RETRY_AFTER = 'Retry-After';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const REQUEST_ID_HEADER = 'X-Request-Id';
/** The request headers of a call, as written; Node hands them over in lower case (`*_IN`). */
export const API_KEY_HEADER = 'X-Api-Key';
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const WWW_AUTHENTICATE = 'WWW-Authenticate';
export const REQUEST_ID_IN = REQUEST_ID_HEADER.toLowerCase();
export const API_KEY_IN = API_KEY_HEADER.toLowerCase();
export const IDEMPOTENCY_KEY_IN = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/**
 * The API's own response headers a browser client must be able to read (CORS `Access-Control-Expose-Headers`), in this
 * order.
 */
export const EXPOSED_API_HEADERS = [REQUEST_ID_HEADER, RETRY_AFTER, ...RATE_LIMIT_HEADERS, ...UNIT_HEADERS];

/**
 * The headers of a procedure call's answer, rendered from what the pipeline's steps recorded on the
 * context: the window (`rate`), a refused audience's challenge, the unit balance (`balance`), `Retry-After`,
 * and a replay's stored headers with `Idempotent-Replayed`. Both adapters send these (REST on every answer,
 * MCP on the HTTP answer of a single tool call). `baseUrl` and `surface` write the challenge.
 */
export function outcomeHeaders(out: ResponseState, baseUrl: string, surface: SurfaceName): Record<string, string> {
  const h: Record<string, string> = {};
  const { rate, balance } = out;
  if (rate) {
    h['RateLimit-Limit'] = String(rate.limit);
    h['RateLimit-Remaining'] = String(rate.remaining);
    h['RateLimit-Reset'] = String(rate.resetSeconds);
    h['RateLimit-Policy'] = `${rate.limit};w=${rate.windowSeconds}`;
    h['Svc-RateLimit-Scope'] = rate.scope;
  }
  if (out.challenge?.kind === 'audience') h[WWW_AUTHENTICATE] = challengeHeader(baseUrl, surface, out.challenge)!;
  if (balance) {
    h['Svc-Api-Units-Limit'] = String(balance.limit);
    h['Svc-Api-Units-Remaining'] = String(balance.remaining);
    h['Svc-Api-Units-Used'] = String(balance.used);
    h['Svc-Api-Units-Cost'] = String(balance.cost);
    h['Svc-Api-Units-Reset'] = balance.resetsAt;
  }
  if (out.retryAfter !== undefined) h[RETRY_AFTER] = String(out.retryAfter);
  if (out.replayed) {
    for (const k in out.replayed.headers) h[k] = out.replayed.headers[k];
    h[REPLAYED_HEADER] = 'true';
  }
  return h;
}

/** The answer's headers on REST: the outcome's, the challenge of a refused credential (401), the request id. */
export function restHeaders(out: ResponseState, baseUrl: string, requestId: string): Record<string, string> {
  const h = outcomeHeaders(out, baseUrl, 'rest');
  if (out.challenge?.kind === 'unauthorized') h[WWW_AUTHENTICATE] = challengeHeader(baseUrl, 'rest', out.challenge)!;
  h[REQUEST_ID_HEADER] = requestId;
  return h;
}

/** Standard HTTP headers the MCP surface sets or reads, as written; Node hands request headers over in lower case. */
export const AUTHORIZATION_HEADER = 'Authorization';
export const ACCEPT_HEADER = 'Accept';
export const ORIGIN_HEADER = 'Origin';
export const VARY_HEADER = 'Vary';
export const ALLOW_HEADER = 'Allow';
export const CACHE_CONTROL_HEADER = 'Cache-Control';
export const CONTENT_TYPE_HEADER = 'Content-Type';
export const CONTENT_LENGTH_HEADER = 'Content-Length';
/** The MCP transport's request headers (Streamable HTTP), as written. */
export const MCP_PROTOCOL_VERSION_HEADER = 'Mcp-Protocol-Version';
export const MCP_METHOD_HEADER = 'Mcp-Method';
export const MCP_NAME_HEADER = 'Mcp-Name';
export const MCP_SESSION_ID_HEADER = 'Mcp-Session-Id';
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';
/** svc's MCP connection options: the toolsets and read-only selection (docs/mcp.md). */
export const MCP_TOOLSETS_HEADER = 'X-MCP-Toolsets';
export const MCP_READONLY_HEADER = 'X-MCP-Readonly';
/** Tells a buffering reverse proxy (nginx) to pass an SSE stream on as it is written. */
export const ACCEL_BUFFERING_HEADER = 'X-Accel-Buffering';

/** Each header of the two lists by name, for the modules that describe one of them (rest/openapi.ts). */
export const [RATE_LIMIT_LIMIT, RATE_LIMIT_REMAINING, RATE_LIMIT_RESET, RATE_LIMIT_POLICY, RATE_LIMIT_SCOPE] =
  RATE_LIMIT_HEADERS;
export const [UNITS_LIMIT, UNITS_REMAINING, UNITS_USED, UNITS_COST, UNITS_RESET] = UNIT_HEADERS;
