import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { configureClientMetadataFetch } from '../../src/oauth/clientMetadataDocument.js';
import type { TestServer } from '../helpers/harness.js';

const TLS_DIR = path.resolve(import.meta.dirname, '../fixtures/tls');
/** A test certificate for agent.example.test (self-signed, valid for a century; only for these tests). */
export const TEST_CERT = fs.readFileSync(path.join(TLS_DIR, 'cert.pem'), 'utf8');
const TEST_KEY = fs.readFileSync(path.join(TLS_DIR, 'key.pem'), 'utf8');

export const METADATA_HOST = 'agent.example.test';
/** A name the test resolver maps to an internal address (SSRF). */
export const INTERNAL_HOST = 'internal.example.test';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * An https server standing in for a client's web site that publishes Client ID Metadata Documents, on a
 * loopback port; the server under test reaches it as https://agent.example.test:<port>/… through its SSRF
 * guard (the test resolver maps the name to 127.0.0.1, which the test allow-list admits) and trusts its
 * certificate through the injected CA. Counts the requests per path.
 */
export async function startMetadataServer(t: TestServer) {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const server = https.createServer({ cert: TEST_CERT, key: TEST_KEY }, (req, res) => {
    const p = new URL(req.url ?? '/', 'https://x').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const h = routes.get(p);
    if (h) return h(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  configureClientMetadataFetch(t.rt.services, {
    ca: [TEST_CERT],
    resolver: async (host) => {
      if (host === METADATA_HOST) return [{ address: '127.0.0.1', family: 4 }];
      if (host === INTERNAL_HOST) return [{ address: '10.20.30.40', family: 4 }];
      return [];
    },
    totalTimeoutMs: 1500,
  });
  const origin = `https://${METADATA_HOST}:${port}`;
  return {
    origin,
    url: (p: string) => `${origin}${p}`,
    hits: (p: string) => hits.get(p) ?? 0,
    /** Serves `doc` as JSON at `p` (`headers` added). */
    json(p: string, doc: unknown, headers: Record<string, string> = {}) {
      routes.set(p, (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'application/json', ...headers })
          .end(typeof doc === 'string' ? doc : JSON.stringify(doc));
      });
    },
    route(p: string, h: Handler) {
      routes.set(p, h);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A valid metadata document for `url`. */
export const clientDocument = (url: string, o: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: 'Desk Agent',
  redirect_uris: ['http://127.0.0.1/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  ...o,
});
