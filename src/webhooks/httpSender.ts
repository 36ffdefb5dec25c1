import type { LookupAddress, LookupOptions } from 'node:dns';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { RESPONSE_PREVIEW_BYTES } from './constants.js';
import type { CheckedTarget } from './ssrfGuard.js';

/** Bounds of one attempt (spec 6.5 "bounded timeouts"). */
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
 * The real sender: a POST over undici that connects only to `target.address` (the address the SSRF guard
 * checked: the socket's DNS lookup is answered with it, while TLS still verifies the host name), never
 * follows a redirect, and is bounded by connect, header and body timeouts plus an overall deadline.
 */
export const undiciSender: HttpSender = async ({ target, headers, body, timeouts, signal }) => {
  const lookup = (_host: string, opts: LookupOptions, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: target.address, family: target.family } satisfies LookupAddress]);
    else cb(null, target.address, target.family);
  };
  const agent = new Agent({
    connect: { timeout: timeouts.connectMs, lookup: lookup as never },
    headersTimeout: timeouts.responseMs,
    bodyTimeout: timeouts.responseMs,
    connections: 1,
    pipelining: 0,
  });
  const deadline = AbortSignal.timeout(timeouts.connectMs + 2 * timeouts.responseMs);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let statusCode: number | null = null;
  try {
    const res = await request(target.url, {
      method: 'POST', headers, body, dispatcher: agent, signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
    });
    statusCode = res.statusCode;
    const preview = await readPreview(res.body as never);
    return { statusCode, body: preview, error: null, durationMs: elapsed() };
  } catch (err) {
    const e = err as { code?: string; name?: string };
    const error = signal?.aborted ? 'aborted' : TIMEOUT_CODES.has(e.code ?? '') || deadline.aborted ? 'timeout' : 'network_error';
    return { statusCode: error === 'aborted' ? null : statusCode, body: null, error, durationMs: elapsed() };
  } finally {
    agent.destroy().catch(() => undefined);
  }
};
