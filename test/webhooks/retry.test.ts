import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { addWebhook, deliveryRows, type Reply, startReceiver, testClock } from './helpers.js';

async function setup(script: Reply[], env: Record<string, string> = {}) {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const t = await startTestServer({ now: clock.now, env });
  const w = await createWorld(t.rt);
  const rx = await startReceiver(script);
  const hook = await addWebhook(t.rt, w.roomId, rx.url);
  const worker = createWebhookWorker({ services: t.rt.services, timeouts: { connectMs: 2000, responseMs: 300 } });
  const record = () => call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'R' } });
  const close = async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  };
  return { clock, t, w, rx, hook, worker, record, [Symbol.asyncDispose]: close };
}

describe('retries', () => {
  it('retries 5xx after 2 s, 4 s and 8 s, 4 attempts in all, one Svc-Webhook-Delivery, signed afresh each time', async () => {
    await using s = await setup([{ status: 503 }, { status: 500 }, { status: 502 }, { status: 504 }]);
    await s.record();
    expect(await s.worker.runOnce()).toBe(1);
    for (const wait of [2000, 4000, 8000]) {
      s.clock.advance(wait - 1);
      expect(await s.worker.runOnce()).toBe(0);
      s.clock.advance(1);
      expect(await s.worker.runOnce()).toBe(1);
    }
    const finalizedAt = s.clock.now().toISOString();
    s.clock.advance(60_000);
    expect(await s.worker.runOnce()).toBe(0);
    const reqs = s.rx.requests;
    expect(reqs).toHaveLength(4);
    expect(new Set(reqs.map((r) => r.headers['svc-webhook-delivery'])).size).toBe(1);
    expect(new Set(reqs.map((r) => r.headers['svc-webhook-id'])).size).toBe(1);
    const stamps = reqs.map((r) => Number(r.headers['svc-webhook-timestamp']));
    expect(stamps.map((x) => x - stamps[0])).toEqual([0, 2, 6, 14]);
    expect(new Set(reqs.map((r) => r.headers['svc-webhook-signature'])).size).toBe(4);
    expect(new Set(reqs.map((r) => r.body.toString())).size).toBe(1);
    for (const r of reqs) {
      const at = () => new Date(Number(r.headers['svc-webhook-timestamp']) * 1000);
      expect(verifyWebhook({ rawBody: r.body, headers: r.headers, secrets: [s.hook.secret], now: at }).ok).toBe(true);
    }
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'failed', attempts: 4, statusCode: 504, finalizedAt });
    const history = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks/${s.hook.id}/deliveries`, {
      key: s.w.key,
    });
    expect(history.body.data[0]).toMatchObject({ success: false, attempts: 4, statusCode: 504 });
  });

  it('takes the backoff base from SVC_WEBHOOK_BACKOFF_BASE_MS (base, 2×base, 4×base) and succeeds on a later 2xx', async () => {
    await using s = await setup([{ status: 429 }, { status: 408 }, { status: 201 }], {
      SVC_WEBHOOK_BACKOFF_BASE_MS: '100',
    });
    await s.record();
    await s.worker.runOnce();
    s.clock.advance(99);
    expect(await s.worker.runOnce()).toBe(0);
    s.clock.advance(1);
    expect(await s.worker.runOnce()).toBe(1);
    s.clock.advance(199);
    expect(await s.worker.runOnce()).toBe(0);
    s.clock.advance(1);
    expect(await s.worker.runOnce()).toBe(1);
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'succeeded', attempts: 3, statusCode: 201 });
    expect(row.finalizedAt).toBe(s.clock.now().toISOString());
  });

  it('retries a timeout and a refused connection', async () => {
    await using s = await setup(['hang', { status: 200 }]);
    await s.record();
    await s.worker.runOnce();
    let [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'pending', attempts: 1, statusCode: null, lastError: 'timeout' });
    s.clock.advance(2000);
    await s.worker.runOnce();
    [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'succeeded', attempts: 2, statusCode: 200 });

    await s.rx.close();
    await s.record();
    await s.worker.runOnce();
    const rows = await deliveryRows(s.t.rt, s.hook.id);
    expect(rows[1]).toMatchObject({ state: 'pending', attempts: 1, lastError: 'connection_refused' });
  });

  for (const status of [400, 401, 403, 404, 410, 422]) {
    it(`stops at once on ${status}`, async () => {
      await using s = await setup([{ status }]);
      await s.record();
      await s.worker.runOnce();
      s.clock.advance(3_600_000);
      expect(await s.worker.runOnce()).toBe(0);
      expect(s.rx.requests).toHaveLength(1);
      const [row] = await deliveryRows(s.t.rt, s.hook.id);
      expect(row).toMatchObject({ state: 'failed', attempts: 1, statusCode: status });
    });
  }

  for (const status of [301, 302, 307, 308]) {
    it(`treats ${status} as a failure and never follows the redirect`, async () => {
      await using s = await setup([]);
      s.rx.script.push({ status, headers: { location: `http://127.0.0.1:${s.rx.port}/elsewhere` } });
      await s.record();
      await s.worker.runOnce();
      s.clock.advance(3_600_000);
      await s.worker.runOnce();
      expect(s.rx.requests.map((r) => r.path)).toEqual(['/hook']);
      const [row] = await deliveryRows(s.t.rt, s.hook.id);
      expect(row).toMatchObject({
        state: 'failed',
        attempts: 1,
        statusCode: status,
        lastError: 'redirect_not_followed',
      });
    });
  }

  it('keeps at most 2 KB of the response body and never shows it through /v1', async () => {
    const big = `BODY-${'x'.repeat(10_000)}`;
    await using s = await setup([{ status: 500, body: big }]);
    await s.record();
    await s.worker.runOnce();
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row.responseBody).toBe(big.slice(0, 2048));
    const history = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks/${s.hook.id}/deliveries`, {
      key: s.w.key,
    });
    expect(history.status).toBe(200);
    expect(JSON.stringify(history.body)).not.toContain('BODY-');
    expect(Object.keys(history.body.data[0]).sort()).toEqual([
      'attempts',
      'deliveryId',
      'durationMs',
      'eventId',
      'eventType',
      'finalizedAt',
      'id',
      'statusCode',
      'success',
    ]);
  });
});
