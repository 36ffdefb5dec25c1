import http, { type Server } from 'node:http';
import type { Services } from '../domain/services.js';
import { metricsEndpoint } from './metricsEndpoint.js';
import { CONTENT_TYPE_HEADER } from '../http/headers.js';

/**
 * A process without an HTTP server of its own (`svc worker`) exposes its metrics on SVC_METRICS_PORT
 * (on HOST): `GET /metrics` with the same bearer token, 404 for anything else. Null when metrics are off
 * or no port is set.
 */
export async function serveMetrics(s: Services): Promise<Server | null> {
  const m = s.config.metrics;
  if (!s.metrics || !m?.port) return null;
  const endpoint = metricsEndpoint(s.metrics, m.token);
  const server = http.createServer((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && /^\/metrics\/?(?:\?|$)/.test(req.url ?? ''))
      return endpoint(req, res);
    req.resume();
    res.writeHead(404, { [CONTENT_TYPE_HEADER]: 'text/plain; charset=utf-8' }).end('Not found\n');
  });
  server.listen(m.port, s.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}
