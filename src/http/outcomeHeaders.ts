import type { ResponseState } from '../contract.js';
import { challengeHeader } from './challenge.js';
import {
  RATE_LIMIT_LIMIT,
  RATE_LIMIT_POLICY,
  RATE_LIMIT_REMAINING,
  RATE_LIMIT_RESET,
  RATE_LIMIT_SCOPE,
  REPLAYED_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER,
  UNITS_COST,
  UNITS_LIMIT,
  UNITS_REMAINING,
  UNITS_RESET,
  UNITS_USED,
  WWW_AUTHENTICATE,
} from './headers.js';
import type { SurfaceName } from './surfaces.js';

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
    h[RATE_LIMIT_LIMIT] = String(rate.limit);
    h[RATE_LIMIT_REMAINING] = String(rate.remaining);
    h[RATE_LIMIT_RESET] = String(rate.resetSeconds);
    h[RATE_LIMIT_POLICY] = `${rate.limit};w=${rate.windowSeconds}`;
    h[RATE_LIMIT_SCOPE] = rate.scope;
  }
  if (out.challenge?.kind === 'audience') h[WWW_AUTHENTICATE] = challengeHeader(baseUrl, surface, out.challenge)!;
  if (balance) {
    h[UNITS_LIMIT] = String(balance.limit);
    h[UNITS_REMAINING] = String(balance.remaining);
    h[UNITS_USED] = String(balance.used);
    h[UNITS_COST] = String(balance.cost);
    h[UNITS_RESET] = balance.resetsAt;
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
