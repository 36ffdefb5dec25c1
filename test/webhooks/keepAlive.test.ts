import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { createPooledSender } from '../../src/webhooks/agentPool.js';
import { configureWebhookDelivery } from '../../src/webhooks/deliveryDeps.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import type { SendRequest } from '../../src/webhooks/httpSender.js';
import type { CheckedTarget, Resolver } from '../../src/outbound/ssrfGuard.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { addWebhook, deliveryRows, startReceiver } from './helpers.js';

const timeouts = { connectMs: 2000, responseMs: 5000 };
const target = (url: string, address: string): CheckedTarget => {
  const u = new URL(url);
  return { url: u, hostname: u.hostname, address, family: 4 };
};
const post = (t: CheckedTarget): SendRequest => ({
  target: t,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
  timeouts,
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}
/** One turn of the event loop: undici hands a connection back to its pool on the turn after a response ends. */
const turn = () => new Promise((r) => setImmediate(r));

describe('keep-alive connections to receivers', () => {
  it('reuses one connection for successive deliveries to the same receiver, and closes it on stop()', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    await addWebhook(t.rt, w.roomId, rx.url);
    await addWebhook(t.rt, w.roomId, `${rx.url}?second`);
    const worker = createWebhookWorker({ services: t.rt.services, batchSize: 1 });
    for (let i = 0; i < 3; i++) {
      await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: `m${i}` } });
      while ((await worker.runOnce()) > 0) await turn();
    }
    expect(rx.requests).toHaveLength(6);
    expect(rx.connections).toBe(1);
    await worker.stop();
    await until(() => rx.openConnections === 0);
  });

  it('never reuses a connection made for one checked address when the name resolves to another', async () => {
    await using t = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '127.0.0.0/8' } });
    await using first = await startReceiver();
    // the same port on another loopback address: same URL, same origin, a different checked address
    await using second = await startReceiver([], { host: '127.0.0.2', port: first.port });
    const answers = ['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.1'];
    let lookups = 0;
    const resolver: Resolver = async () => [{ address: answers[Math.min(lookups++, answers.length - 1)], family: 4 }];
    configureWebhookDelivery(t.rt.services, { resolver });
    const w = await createWorld(t.rt);
    const { webhook } = await createWebhook(t.rt.services, {
      roomId: w.roomId,
      url: `http://receiver.test:${first.port}/hook`,
    });
    lookups = 1; // creation used the first answer
    const worker = createWebhookWorker({ services: t.rt.services });
    try {
      for (let i = 0; i < 3; i++) {
        await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: `m${i}` } });
        expect(await worker.runOnce()).toBe(1);
        await turn();
      }
    } finally {
      await worker.stop();
    }
    // 1st to 127.0.0.1, 2nd to 127.0.0.2 (a new connection there, not the open one to 127.0.0.1), 3rd back to 127.0.0.1
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(1);
    expect(second.connections).toBe(1);
    expect(first.connections).toBe(1);
    expect((await deliveryRows(t.rt, webhook.id)).every((r) => r.state === 'succeeded')).toBe(true);
  });

  it('keys agents by origin and checked address, keeps at most maxAgents and closes the evicted one', async () => {
    await using a = await startReceiver();
    await using b = await startReceiver();
    await using c = await startReceiver();
    const pool = createPooledSender({ maxAgents: 2 });
    try {
      expect((await pool.send(post(target(a.url, '127.0.0.1')))).statusCode).toBe(200);
      await turn();
      expect((await pool.send(post(target(a.url, '127.0.0.1')))).statusCode).toBe(200);
      expect((await pool.send(post(target(b.url, '127.0.0.1')))).statusCode).toBe(200);
      expect(pool.size).toBe(2);
      expect(a.connections).toBe(1);
      // a third receiver evicts the least recently used agent (a's), whose connection is closed
      expect((await pool.send(post(target(c.url, '127.0.0.1')))).statusCode).toBe(200);
      expect(pool.size).toBe(2);
      await until(() => a.openConnections === 0);
      expect(b.openConnections).toBe(1);
      // a again: a new agent, a new connection
      expect((await pool.send(post(target(a.url, '127.0.0.1')))).statusCode).toBe(200);
      expect(a.connections).toBe(2);
    } finally {
      await pool.close();
    }
    expect(pool.size).toBe(0);
    await until(() => a.openConnections + b.openConnections + c.openConnections === 0);
  });

  it('keeps the response preview bound on a kept-alive connection, and a redirect is not followed', async () => {
    await using rx = await startReceiver([
      { status: 200, body: 'x'.repeat(100_000) },
      { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } },
      { status: 200, body: 'fine' },
    ]);
    const pool = createPooledSender();
    try {
      const big = await pool.send(post(target(rx.url, '127.0.0.1')));
      expect(big).toMatchObject({ statusCode: 200, error: null });
      expect(big.body).toHaveLength(2048);
      expect(await pool.send(post(target(rx.url, '127.0.0.1')))).toMatchObject({ statusCode: 302, error: null });
      expect(await pool.send(post(target(rx.url, '127.0.0.1')))).toMatchObject({ statusCode: 200, body: 'fine' });
      expect(rx.requests).toHaveLength(3);
    } finally {
      await pool.close();
    }
  });
});
