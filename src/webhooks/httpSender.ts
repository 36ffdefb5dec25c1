import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher, request } from 'undici';
import { RESPONSE_PREVIEW_BYTES } from './constants.js';
import { pinnedLookup, type CheckedTarget } from '../outbound/ssrfGuard.js';

/** Bounds of one attempt, so a slow receiver cannot hold a worker. */
export interface SendTimeouts {
  connectMs: number;
  /** For the response headers, and again for the body. */
  responseMs: number;
}

export const DEFAULT_TIMEOUTS: SendTimeouts = { connectMs: 5000, responseMs: 10_000 };

export interface SendRequest {
  target: CheckedTarget;
  headers: Record<string, string>;
  body: Buffer;
  timeouts: SendTimeouts;
  /** Aborted when the worker stops: the attempt is then not counted. */
  signal?: AbortSignal;
}

export interface SendResult {
  /** The receiver's status; null when no response came. */
  statusCode: number | null;
  /** At most RESPONSE_PREVIEW_BYTES of the response body. */
  body: string | null;
  error: 'timeout' | 'network_error' | 'aborted' | null;
  durationMs: number;
  /** Finer cause of a failure without a response (attempt records): see networkErrorClass. */
  errorClass?: string | null;
  /** The receiver's response headers (lower-case names; repeated ones joined with ", "). */
  headers?: Record<string, string> | null;
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO$)/;

/**
 * The class of a transport failure, for the attempt records: `timeout`, `connection_refused`,
 * `connection_reset`, `dns`, `tls`, else `network_error`. Looks at the error and its causes.
 */
export function networkErrorClass(err: unknown, timedOut = false): string {
  if (timedOut) return 'timeout';
  for (
    let e = err as { code?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    const code = e.code ?? '';
    if (TIMEOUT_CODES.has(code) || code === 'ETIMEDOUT') return 'timeout';
    if (code === 'ECONNREFUSED') return 'connection_refused';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED')
      return 'connection_reset';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'dns';
    if (TLS_CODE.test(code)) return 'tls';
  }
  return 'network_error';
}

function headerRecord(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Sends one webhook request (injectable: tests may replace the transport, never the SSRF check before it). */
export type HttpSender = (req: SendRequest) => Promise<SendResult>;

async function readPreview(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_PREVIEW_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_PREVIEW_BYTES).toString('utf8');
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * An undici Agent that connects only to `target.address`, bounded by the connect, header and body
 * timeouts. `keepAlive` keeps connections open for the next request to the same key (the pool's caller
 * guarantees the key includes the pinned address); without it every request gets its own connection.
 */
export function pinnedAgent(
  target: CheckedTarget,
  timeouts: SendTimeouts,
  o: { keepAlive: boolean; connections?: number },
): Agent {
  return new Agent({
    connect: { timeout: timeouts.connectMs, lookup: pinnedLookup(target) as never },
    headersTimeout: timeouts.responseMs,
    bodyTimeout: timeouts.responseMs,
    connections: o.connections ?? 1,
    // pipelining 0 turns keep-alive off; 1 keeps a connection for the next request, never two at once on it
    pipelining: o.keepAlive ? 1 : 0,
    ...(o.keepAlive ? { keepAliveTimeout: 4000, keepAliveMaxTimeout: 30_000 } : {}),
  });
}

/**
 * One POST through `dispatcher` (an agent pinned to `target.address`): never follows a redirect, reads at
 * most RESPONSE_PREVIEW_BYTES of the answer, and is bounded by an overall deadline besides the agent's
 * timeouts. Never throws: a failure is a result.
 */
export async function sendVia(
  dispatcher: Dispatcher,
  { target, headers, body, timeouts, signal }: SendRequest,
): Promise<SendResult> {
  // one controller for the deadline and the worker's stop (cheaper than AbortSignal.timeout + AbortSignal.any,
  // which also keeps every dependent signal registered on the long-lived stop signal until GC)
  const ac = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(
    () => {
      timedOut = true;
      ac.abort();
    },
    timeouts.connectMs + 2 * timeouts.responseMs,
  );
  const stop = () => ac.abort();
  if (signal?.aborted) ac.abort();
  else signal?.addEventListener('abort', stop, { once: true });
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let statusCode: number | null = null;
  let responseHeaders: Record<string, string> | null = null;
  try {
    // undici's request() follows no redirect (that takes an interceptor, never installed here)
    const res = await request(target.url, { method: 'POST', headers, body, dispatcher, signal: ac.signal });
    statusCode = res.statusCode;
    responseHeaders = headerRecord(res.headers);
    const preview = await readPreview(res.body as never);
    return {
      statusCode,
      body: preview,
      error: null,
      durationMs: elapsed(),
      errorClass: null,
      headers: responseHeaders,
    };
  } catch (err) {
    const e = err as { code?: string; name?: string };
    const error = signal?.aborted
      ? 'aborted'
      : TIMEOUT_CODES.has(e.code ?? '') || timedOut
        ? 'timeout'
        : 'network_error';
    const errorClass = error === 'aborted' ? null : error === 'timeout' ? 'timeout' : networkErrorClass(err);
    return {
      statusCode: error === 'aborted' ? null : statusCode,
      body: null,
      error,
      durationMs: elapsed(),
      errorClass,
      headers: responseHeaders,
    };
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener('abort', stop);
  }
}

/**
 * The one-shot sender (synchronous redelivery): a fresh agent per attempt, closed after it. It connects only
 * to `target.address` (the address the SSRF guard checked: the socket's DNS lookup is answered with it,
 * while TLS still verifies the host name). The worker uses the keep-alive pool of agentPool.ts instead.
 */
export const undiciSender: HttpSender = async (req) => {
  const agent = pinnedAgent(req.target, req.timeouts, { keepAlive: false });
  try {
    return await sendVia(agent, req);
  } finally {
    agent.destroy().catch(() => undefined);
  }
};
