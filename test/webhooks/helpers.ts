import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import type { Runtime } from '../../src/runtime.js';
import type { CustomHeader } from '../../src/webhooks/customHeaders.js';

/** A request as a local receiver saw it: exact raw body and headers (names lower-cased by Node). */
export interface Captured {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Header names as they came on the wire, in order. */
  rawHeaderNames: string[];
  body: Buffer;
}

export type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A local webhook receiver on 127.0.0.1 (never outbound network). Replies from `script`, then 200. */
export interface Receiver {
  url: string;
  port: number;
  requests: Captured[];
  /** Replies for the next requests, in order. */
  script: Reply[];
  /** TCP connections accepted so far, and those still open. */
  readonly connections: number;
  readonly openConnections: number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startReceiver(
  script: Reply[] = [],
  at: { host?: string; port?: number } = {},
): Promise<Receiver> {
  const requests: Captured[] = [];
  const sockets = { accepted: 0, open: 0 };
  const hanging: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawHeaderNames = req.rawHeaders.filter((_, i) => i % 2 === 0);
      requests.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        rawHeaderNames,
        body: Buffer.concat(chunks),
      });
      const reply = r.script.shift() ?? { status: 200, body: 'ok' };
      if (reply === 'hang') {
        hanging.push(() => res.destroy());
        return;
      }
      res.writeHead(reply.status, reply.headers ?? { 'content-type': 'text/plain' });
      res.end(reply.body ?? '');
    });
  });
  server.on('connection', (socket) => {
    sockets.accepted++;
    sockets.open++;
    socket.on('close', () => sockets.open--);
  });
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port ?? 0, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    hanging.forEach((f) => f());
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  const r: Receiver = {
    url: `http://${host}:${port}/hook`,
    port,
    requests,
    script,
    close,
    [Symbol.asyncDispose]: close,
    get connections() {
      return sockets.accepted;
    },
    get openConnections() {
      return sockets.open;
    },
  };
  return r;
}

/** A clock tests move by hand. */
export interface TestClock {
  now: () => Date;
  set(iso: string): void;
  advance(ms: number): void;
}

export function testClock(start: string): TestClock {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    set: (iso) => void (t = new Date(iso).getTime()),
    advance: (ms) => void (t += ms),
  };
}

export async function addWebhook(
  rt: Runtime,
  roomId: string,
  url: string,
  o: { apiVersion?: string; headers?: CustomHeader[] } = {},
): Promise<{ id: string; secret: string }> {
  const { webhook, secret } = await createWebhook(rt.services, {
    roomId,
    url,
    apiVersion: o.apiVersion,
    headers: o.headers,
  });
  return { id: webhook.id, secret };
}

/** Deliveries of a webhook straight from the table (operators' view, includes what the API never shows). */
export async function deliveryRows(rt: Runtime, webhookId: string) {
  return rt.ds.getRepository('WebhookDelivery').find({ where: { webhookId }, order: { id: 'ASC' } }) as Promise<any[]>;
}

/**
 * A test server (on a hand-moved clock when given one, else the real time), a world, a local receiver and a
 * delivery worker, closed together with `await using`.
 */
export async function startWebhookWorld(o: { clock?: TestClock; dataDir?: string } = {}) {
  const clock = o.clock;
  const t = await startTestServer({ now: clock?.now, dataDir: o.dataDir });
  const w = await createWorld(t.rt);
  const rx = await startReceiver();
  const worker = createWebhookWorker({ services: t.rt.services });
  const close = async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  };
  return { t, w, rx, worker, [Symbol.asyncDispose]: close };
}
