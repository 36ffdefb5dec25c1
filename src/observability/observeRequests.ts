import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { SURFACES, surfacePattern } from '../http/surfaces.js';
import type { Metrics, Surface } from './metrics.js';
import { endRequestSpan, startRequestSpan, tracingEnabled } from './tracing.js';

const OPERATION = Symbol('svc.operation');
type Marked = ServerResponse & { [OPERATION]?: string };

/**
 * Names the operation a request turned out to be, for its metrics and span: the route template
 * (`GET /v1/rooms/{roomId}`), the MCP tool or JSON-RPC method, never a concrete path. The adapters call it
 * with strings they hold already (no string is built per request); an unnamed request is `unmatched`.
 */
export function setOperation(res: ServerResponse, operation: string): void {
  (res as Marked)[OPERATION] = operation;
}

/** Operator endpoints, not counted: a scrape or a probe every few seconds would drown the traffic. */
const OPERATOR_PATHS = /^\/(?:metrics|healthz|readyz)\/?(?:\?|$)/;

/**
 * The surfaces' paths (src/http/surfaces.ts), any case, and their first letters in lower case for a cheap first test.
 */
const REST_PATH = new RegExp(`${surfacePattern('rest')}(?:[/?]|$)`, 'i');
const MCP_PATH = new RegExp(`${surfacePattern('mcp')}(?:[/?]|$)`, 'i');
const REST_INITIAL = SURFACES.rest.path.charCodeAt(1) | 0x20;
const MCP_INITIAL = SURFACES.mcp.path.charCodeAt(1) | 0x20;

function surfaceOf(url: string): Surface | null {
  const c = url.charCodeAt(1) | 0x20; // the first letter, any case (paths match case-insensitively)
  if (c === REST_INITIAL && REST_PATH.test(url)) return 'rest';
  if (c === MCP_INITIAL) {
    if (MCP_PATH.test(url)) return 'mcp';
    if (OPERATOR_PATHS.test(url)) return null;
  }
  if ((c === 0x68 /* h */ || c === 0x72) /* r */ && OPERATOR_PATHS.test(url)) return null;
  if (/^\/(?:oauth(?:[/?]|$)|\.well-known\/oauth-)/.test(url)) return 'oauth';
  return 'pages';
}

/** Express records the matched route on the request (pages and OAuth endpoints): its template is the operation. */
function routeOperation(req: IncomingMessage): string | undefined {
  const route = (req as IncomingMessage & { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${req.method} ${route.path}` : undefined;
}

export interface ObserveRequestsOptions {
  metrics?: Metrics;
}

/**
 * Wraps the server's request listener so each request, once answered, counts in the metrics (surface,
 * operation, status class, duration) and, when tracing is on, runs inside one span. With neither, the
 * listener is returned as it is: nothing is added to a request.
 */
export function observeRequests(listener: RequestListener, { metrics }: ObserveRequestsOptions): RequestListener {
  if (!metrics && !tracingEnabled()) return listener;
  return function observed(req: IncomingMessage, res: ServerResponse) {
    const surface = surfaceOf(req.url ?? '/');
    if (surface === null) return listener(req, res);
    const start = performance.now();
    const traced = startRequestSpan(req.method ?? 'GET', req.headers);
    // 'close' comes once the answer is sent, or when the client went away first (not counted, span ended)
    res.once('close', () => {
      const operation =
        (res as Marked)[OPERATION] ??
        (surface === 'rest' || surface === 'mcp' ? undefined : routeOperation(req)) ??
        'unmatched';
      if (res.writableFinished)
        metrics?.requestEnded(surface, operation, res.statusCode, (performance.now() - start) / 1000);
      if (traced)
        endRequestSpan(traced.span, req.method ?? 'GET', surface, operation, res.statusCode, !res.writableFinished);
    });
    if (traced) return context.with(traced.ctx, () => listener(req, res));
    listener(req, res);
  };
}
