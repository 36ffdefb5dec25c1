import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { configureWebhookDelivery } from '../../src/webhooks/deliveryDeps.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { RESPONSE_PREVIEW_BYTES } from '../../src/webhooks/constants.js';
import { addWebhook, deliveryRows } from '../webhooks/helpers.js';

// Receivers that are slow, hang, reset the connection or answer without end. Each attempt of the
// real sender (undici) ends within its bounds (connect + headers + body timeouts, and an overall deadline)
// and keeps at most 2 KB of what came back, whatever the receiver does. Timeouts are shortened here through
// the worker's injectable deps; the bounds themselves are the sender's.

const TIMEOUTS = { connectMs: 1000, responseMs: 1000 };
const DEADLINE_MS = TIMEOUTS.connectMs + 2 * TIMEOUTS.responseMs;
const GIGABYTE = 1024 ** 3;

/** One local receiver, misbehaving in a different way on each path. */
async function startHostileReceiver() {
  const sockets = new Set<Socket>();
  const sent: Record<string, number> = {};
  const behaviours: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/slow': (_req, res) => void setTimeout(() => res.writeHead(200).end('slow but fine'), TIMEOUTS.responseMs / 4),
    '/hang': () => undefined,
    '/reset': (req) => req.socket.destroy(),
    '/reset-mid-body': (req, res) => {
      res.writeHead(500, { 'content-length': '100000' });
      res.write('x'.repeat(1000), () => req.socket.destroy());
    },
    // a gigabyte announced and streamed as fast as the client takes it
    '/endless': (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/octet-stream', 'content-length': String(GIGABYTE) });
      const chunk = Buffer.alloc(64 * 1024, 'z');
      sent['/endless'] = 0;
      const pump = () => {
        while (!res.destroyed && sent['/endless'] < GIGABYTE) {
          sent['/endless'] += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => undefined);
      pump();
    },
    // headers never finish: one byte at a time
    '/slow-headers': (req) => {
      req.socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
      const drip = setInterval(() => (req.socket.destroyed ? clearInterval(drip) : req.socket.write('a')), 50);
    },
    // a body that trickles in under the idle timeout but would take hours to finish
    '/drip-body': (req, res) => {
      res.writeHead(200, { 'content-length': String(GIGABYTE) });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('d')), 50);
      req.socket.on('close', () => clearInterval(drip));
    },
    '/huge-headers': (_req, res) => res.writeHead(200, { 'x-huge': 'h'.repeat(1024 * 1024) }).end(),
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => behaviours[new URL(req.url!, 'http://x').pathname]?.(req, res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    paths: Object.keys(behaviours),
    sent,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('hostile webhook receivers', () => {
  it('every attempt ends within its bounds, keeps at most 2 KB, and is classified for retry or stop', async () => {
    await using t = await startTestServer();
    const rx = await startHostileReceiver();
    try {
      const w = await createWorld(t.rt);
      configureWebhookDelivery(t.rt.services, { timeouts: TIMEOUTS });
      const hooks = Object.fromEntries(
        await Promise.all(
          rx.paths.map(async (p) => [p, (await addWebhook(t.rt, w.roomId, `${rx.base}${p}`)).id] as const),
        ),
      );
      expect(
        (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hello' } })).status,
      ).toBe(201);

      const worker = createWebhookWorker({ services: t.rt.services, batchSize: 20 });
      const started = performance.now();
      expect(await worker.runOnce()).toBe(rx.paths.length);
      const elapsed = performance.now() - started;
      await worker.stop();
      // all attempts ran side by side and each was cut off by its own bounds (generous slack for a busy machine)
      expect(elapsed).toBeLessThan(DEADLINE_MS + 4000);

      const row = async (p: string) => (await deliveryRows(t.rt, hooks[p]))[0];
      const rows = Object.fromEntries(await Promise.all(rx.paths.map(async (p) => [p, await row(p)] as const)));
      for (const [p, r] of Object.entries(rows)) {
        expect(r.attempts, p).toBe(1);
        expect(r.leaseOwner, p).toBeNull();
        expect((r.responseBody ?? '').length, p).toBeLessThanOrEqual(RESPONSE_PREVIEW_BYTES);
        expect(r.durationMs ?? 0, p).toBeLessThan(DEADLINE_MS + 2000);
      }
      expect(rows['/slow']).toMatchObject({ state: 'succeeded', statusCode: 200, responseBody: 'slow but fine' });
      expect(rows['/hang']).toMatchObject({ state: 'pending', statusCode: null, lastError: 'timeout' });
      expect(rows['/slow-headers']).toMatchObject({ state: 'pending', statusCode: null, lastError: 'timeout' });
      expect(rows['/reset']).toMatchObject({ state: 'pending', statusCode: null, lastError: 'connection_reset' });
      expect(rows['/huge-headers']).toMatchObject({ state: 'pending', statusCode: null, lastError: 'network_error' });
      // a 5xx is retried whatever its body did; a 2xx is a success even if its body never ends
      expect(rows['/reset-mid-body']).toMatchObject({ state: 'pending', statusCode: 500 });
      expect(rows['/endless']).toMatchObject({ state: 'pending', statusCode: 503 });
      expect(rows['/endless'].responseBody).toBe('z'.repeat(RESPONSE_PREVIEW_BYTES));
      expect(rows['/drip-body']).toMatchObject({ state: 'succeeded', statusCode: 200 });
      // the endless receiver was cut off long before its gigabyte: memory stays bounded
      expect(rx.sent['/endless']).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await rx.close();
    }
  });
});
