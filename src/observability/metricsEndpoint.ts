import type { IncomingMessage, ServerResponse } from 'node:http';
import { safeEqual, sha256Hex } from '../domain/hashing.js';
import type { Metrics } from './metrics.js';
import { CACHE_CONTROL_HEADER, CONTENT_TYPE_HEADER, WWW_AUTHENTICATE } from '../http/headers.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * `GET /metrics` in the Prometheus text format, for a scraper holding `Authorization: Bearer <SVC_METRICS_TOKEN>`.
 * Anything else is a bare 401 that says nothing of the metrics. The token is compared in constant time
 * (as SHA-256 digests, so not even its length shows).
 */
export function metricsEndpoint(metrics: Metrics, token: string): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = sha256Hex(token);
  return (req, res) => {
    const presented = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (!presented || !safeEqual(sha256Hex(presented), expected)) {
      res.writeHead(401, {
        [CONTENT_TYPE_HEADER]: 'text/plain; charset=utf-8',
        [WWW_AUTHENTICATE]: 'Bearer realm="metrics"',
        [CACHE_CONTROL_HEADER]: 'no-store',
      });
      res.end('Unauthorized\n');
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { [CONTENT_TYPE_HEADER]: metrics.registry.contentType, [CACHE_CONTROL_HEADER]: 'no-store' });
        res.end(text);
      },
      () => {
        res.writeHead(503, { [CONTENT_TYPE_HEADER]: 'text/plain; charset=utf-8', [CACHE_CONTROL_HEADER]: 'no-store' });
        res.end('Metrics unavailable\n');
      },
    );
  };
}
