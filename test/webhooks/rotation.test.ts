import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { completeWebhookRotation, rotateWebhookSecret } from '../../src/webhooks/rotation.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { addWebhook, startReceiver, testClock } from './helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const sig = (secret: string, ts: string, body: Buffer) =>
  `v1=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`;

async function setup(apiVersion?: string) {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const t = await startTestServer({ now: clock.now });
  const w = await createWorld(t.rt);
  const rx = await startReceiver();
  const hook = await addWebhook(t.rt, w.roomId, rx.url, { apiVersion });
  const worker = createWebhookWorker({ services: t.rt.services });
  const deliver = async () => {
    await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'R' } });
    await worker.runOnce();
    return rx.requests[rx.requests.length - 1];
  };
  const list = async () => (await call(t, 'GET', `/v1/rooms/${w.roomId}/webhooks`, { key: w.key })).body.data[0];
  const close = async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  };
  return { clock, t, w, rx, hook, deliver, list, [Symbol.asyncDispose]: close };
}

describe('secret rotation', () => {
  it('signs with current then next while rotating, and only with next after completion by hand', async () => {
    await using s = await setup();
    const started = await rotateWebhookSecret(s.t.rt.services, s.hook.id);
    expect(started.nextSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(started.nextSecret).not.toBe(s.hook.secret);
    expect(started.rotationEndsAt).toBe(new Date(s.clock.now().getTime() + 7 * DAY).toISOString());
    expect(await s.list()).toMatchObject({ rotating: true, rotationEndsAt: started.rotationEndsAt });

    const during = await s.deliver();
    const ts = during.headers['svc-webhook-timestamp'] as string;
    expect(during.headers['svc-webhook-signature']).toBe(
      `${sig(s.hook.secret, ts, during.body)},${sig(started.nextSecret, ts, during.body)}`,
    );
    for (const secrets of [[s.hook.secret], [started.nextSecret]]) {
      expect(verifyWebhook({ rawBody: during.body, headers: during.headers, secrets, now: s.clock.now }).ok).toBe(true);
    }

    await completeWebhookRotation(s.t.rt.services, s.hook.id);
    expect(await s.list()).toMatchObject({ rotating: false, rotationEndsAt: null });
    const after = await s.deliver();
    const ts2 = after.headers['svc-webhook-timestamp'] as string;
    expect(after.headers['svc-webhook-signature']).toBe(sig(started.nextSecret, ts2, after.body));
    expect(
      verifyWebhook({ rawBody: after.body, headers: after.headers, secrets: [s.hook.secret], now: s.clock.now }),
    ).toMatchObject({ ok: false });
  });

  it('completes by itself when the period ends, signing with the new secret from that instant', async () => {
    await using s = await setup();
    const { nextSecret } = await rotateWebhookSecret(s.t.rt.services, s.hook.id, { periodDays: 3 });
    s.clock.advance(3 * DAY - 1000);
    expect((await s.deliver()).headers['svc-webhook-signature']).toContain(',');
    s.clock.advance(1000);
    const after = await s.deliver();
    const ts = after.headers['svc-webhook-timestamp'] as string;
    expect(after.headers['svc-webhook-signature']).toBe(sig(nextSecret, ts, after.body));
    expect(await s.list()).toMatchObject({ rotating: false, rotationEndsAt: null });
    // the promotion is written: a later rotation starts from the promoted secret
    const again = await rotateWebhookSecret(s.t.rt.services, s.hook.id);
    const during = await s.deliver();
    const ts2 = during.headers['svc-webhook-timestamp'] as string;
    expect(during.headers['svc-webhook-signature']).toBe(
      `${sig(nextSecret, ts2, during.body)},${sig(again.nextSecret, ts2, during.body)}`,
    );
  });

  it('allows at most 90 days, refuses a second rotation while one runs, and completing when none runs', async () => {
    await using s = await setup();
    const svc = s.t.rt.services;
    for (const periodDays of [0, 91, 1.5, -1]) {
      await expect(rotateWebhookSecret(svc, s.hook.id, { periodDays })).rejects.toMatchObject({
        code: 'validation_error',
      });
    }
    await expect(completeWebhookRotation(svc, s.hook.id)).rejects.toMatchObject({ code: 'invalid_state', status: 409 });
    const r = await rotateWebhookSecret(svc, s.hook.id, { periodDays: 90 });
    expect(r.rotationEndsAt).toBe(new Date(s.clock.now().getTime() + 90 * DAY).toISOString());
    await expect(rotateWebhookSecret(svc, s.hook.id)).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('keeps X-Webhook-Signature on the current secret only during a v1 rotation', async () => {
    await using s = await setup('2025-10-23');
    const { nextSecret } = await rotateWebhookSecret(s.t.rt.services, s.hook.id);
    const req = await s.deliver();
    expect(req.headers['x-webhook-signature']).toBe(createHmac('sha256', s.hook.secret).update(req.body).digest('hex'));
    expect((req.headers['svc-webhook-signature'] as string).split(',')).toHaveLength(2);
    expect(req.headers['x-webhook-signature']).not.toBe(
      createHmac('sha256', nextSecret).update(req.body).digest('hex'),
    );
  });

  it('shows the next secret once: never in /v1 responses, the database or the audit log', async () => {
    await using s = await setup();
    const { nextSecret } = await rotateWebhookSecret(s.t.rt.services, s.hook.id);
    await s.deliver();
    const responses = [
      await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: s.w.key }),
      await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks/${s.hook.id}/deliveries`, { key: s.w.key }),
    ];
    const dump = async (table: string) => JSON.stringify(await s.t.rt.ds.query(`SELECT * FROM "${table}"`));
    const everything = [
      ...responses.map((r) => JSON.stringify(r.body) + JSON.stringify([...r.headers])),
      await dump('webhooks'),
      await dump('webhook_deliveries'),
      await dump('audit_log'),
    ].join('\n');
    for (const secret of [s.hook.secret, nextSecret]) expect(everything).not.toContain(secret);
    expect(everything).not.toContain('whsec_');
  });
});
