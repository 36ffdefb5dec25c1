import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it, vi } from 'vitest';
import { call } from '../helpers/harness.js';
import { rotateWebhookSecret } from '../../src/webhooks/rotation.js';
import { encryptSecret, loadWebhookKey } from '../../src/webhooks/secretBox.js';
import { standardSecret } from '../../src/webhooks/signing.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { Webhook } from '../../db/entities/index.js';
import { addWebhook, type Captured, startWebhookWorld } from './helpers.js';

// Standard Webhooks 1.0 beside the spec's own headers, checked with verification libraries written
// elsewhere: `standardwebhooks` (the specification's reference implementation) and svix's `Webhook`.
// These libraries read the real clock, so the server here runs on it.

/** The request as a receiver hands it to a library: the raw body as a string and the headers. */
const asReceived = (c: Captured) => ({ body: c.body.toString('utf8'), headers: c.headers as Record<string, string> });

/** Verifies with both libraries; returns the parsed payload of each, or the error each threw. */
function verifyWithLibraries(secret: string, c: Captured): { standard: unknown; svix: unknown } {
  const { body, headers } = asReceived(c);
  const attempt = (f: () => unknown) => {
    try {
      return f();
    } catch (err) {
      return err;
    }
  };
  return {
    standard: attempt(() => new StandardWebhook(secret).verify(body, headers)),
    // svix's verify returns nothing and throws on a mismatch
    svix: attempt(() => {
      new SvixWebhook(secret).verify(body, headers);
      return 'verified';
    }),
  };
}

async function setup() {
  const world = await startWebhookWorld();
  const v2 = await addWebhook(world.t.rt, world.w.roomId, `${world.rx.url}?v=2`);
  const v1 = await addWebhook(world.t.rt, world.w.roomId, `${world.rx.url}?v=1`, { apiVersion: '2025-10-23' });
  return { ...world, v1, v2 };
}

const byVersion = (reqs: Captured[], v: string) => reqs.filter((r) => r.path.endsWith(`?v=${v}`));

describe("Standard Webhooks 1.0 headers beside the spec's", () => {
  it("both libraries accept real v1 and v2 deliveries; the spec's own signature is unchanged", async () => {
    await using s = await setup();
    const rec = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Weekly' } });
    expect(rec.status).toBe(201);
    expect(await s.worker.runOnce()).toBe(2);
    for (const [v, hook] of [
      ['2', s.v2],
      ['1', s.v1],
    ] as const) {
      const [req] = byVersion(s.rx.requests, v);
      const eventId = req.headers['svc-webhook-id'] as string;
      expect(req.headers['webhook-id']).toBe(eventId);
      expect(req.headers['webhook-timestamp']).toBe(req.headers['svc-webhook-timestamp']);
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      const std = standardSecret(hook.secret);
      expect(std).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const verified = verifyWithLibraries(std, req);
      expect(verified.standard).toEqual(JSON.parse(req.body.toString('utf8')));
      expect(verified.svix).toBe('verified');
      // the spec's header, byte for byte as before: hex HMAC over `<timestamp>.<body>` with the secret as held
      const ts = req.headers['svc-webhook-timestamp'] as string;
      expect(req.headers['svc-webhook-signature']).toBe(
        `v1=${createHmac('sha256', hook.secret).update(`${ts}.`).update(req.body).digest('hex')}`,
      );
      expect(verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: [hook.secret] })).toMatchObject({
        ok: true,
        eventId,
      });
    }
  });

  it('rejects a tampered body, a tampered id, another secret and a stale timestamp', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Weekly' } });
    await s.worker.runOnce();
    const [req] = byVersion(s.rx.requests, '2');
    const std = standardSecret(s.v2.secret);
    const tampered = (change: (c: Captured) => Captured) => verifyWithLibraries(std, change(req));
    const cases = [
      tampered((c) => ({
        ...c,
        body: Buffer.from(c.body.toString('utf8').replace('record.created', 'record.deleted')),
      })),
      tampered((c) => ({ ...c, headers: { ...c.headers, 'webhook-id': 'evt_AAAAAAAAAAAAAAAAAAAAAA' } })),
      tampered((c) => ({
        ...c,
        headers: { ...c.headers, 'webhook-timestamp': String(Number(c.headers['webhook-timestamp']) + 1) },
      })),
      verifyWithLibraries(standardSecret(s.v1.secret), req),
    ];
    for (const r of cases) {
      expect(r.standard).toBeInstanceOf(Error);
      expect((r.standard as Error).name).toBe('WebhookVerificationError');
      expect(r.svix).toBeInstanceOf(Error);
    }

    // the same delivery replayed ten minutes later is refused as too old by both (only Date is faked)
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 600_000);
      const r = verifyWithLibraries(std, req);
      expect((r.standard as Error).message).toMatch(/too old/);
      expect((r.svix as Error).message).toMatch(/too old/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('signs with both secrets during a rotation: each library accepts the old and the new secret', async () => {
    await using s = await setup();
    const { nextSecret } = await rotateWebhookSecret(s.t.rt.services, s.v2.id, { periodDays: 2 });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Rotating' } });
    await s.worker.runOnce();
    const [req] = byVersion(s.rx.requests, '2');
    const entries = (req.headers['webhook-signature'] as string).split(' ');
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => /^v1,[A-Za-z0-9+/]{43}=$/.test(e))).toBe(true);
    for (const secret of [s.v2.secret, nextSecret]) {
      const r = verifyWithLibraries(standardSecret(secret), req);
      expect(r.standard).toMatchObject({ type: 'record.created' });
      expect(r.svix).toBe('verified');
    }
    // the spec's header still lists both, comma-separated
    expect((req.headers['svc-webhook-signature'] as string).split(',')).toHaveLength(2);
  });

  it('test events and redeliveries carry the standard headers; a redelivery keeps webhook-id (the event id)', async () => {
    await using s = await setup();
    s.rx.script.push({ status: 500 }, { status: 500 });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const first = byVersion(s.rx.requests, '2')[0];
    const base = `/v1/rooms/${s.w.roomId}/webhooks/${s.v2.id}`;
    const list = await call(s.t, 'GET', `${base}/deliveries`, { key: s.w.key });
    const again = await call(s.t, 'POST', `${base}/deliveries/${list.body.data[0].id}/redeliver`, { key: s.w.key });
    expect(again.status).toBe(200);
    const test = await call(s.t, 'POST', `${base}/test`, { key: s.w.key });
    expect(test.body.outcome.success).toBe(true);
    const [redelivered, tested] = byVersion(s.rx.requests, '2').slice(1);
    expect(redelivered.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(redelivered.headers['svc-webhook-delivery']).not.toBe(first.headers['svc-webhook-delivery']);
    const std = standardSecret(s.v2.secret);
    expect(verifyWithLibraries(std, redelivered).standard).toMatchObject({ id: first.headers['webhook-id'] });
    expect(verifyWithLibraries(std, tested).standard).toMatchObject({ type: 'webhook.test', test: true });
    expect(verifyWithLibraries(std, tested).svix).toBe('verified');
  });

  it("refuses custom headers named as the standard's (any case, `_` for `-`) and drops one stored before the rule", async () => {
    await using s = await setup();
    for (const name of ['webhook-signature', 'Webhook-Id', 'WEBHOOK_TIMESTAMP']) {
      await expect(addWebhook(s.t.rt, s.w.roomId, s.rx.url, { headers: [[name, 'v1,forged']] })).rejects.toMatchObject({
        code: 'validation_error',
        details: { reason: 'protected_header' },
      });
    }
    // a row written before the rule existed: the forged values never reach the receiver
    const key = loadWebhookKey(s.t.rt.services.config);
    const forged = [
      ['Webhook-Signature', 'v1,Zm9yZ2Vk'],
      ['webhook_id', 'evt_forged'],
      ['X-Team', 'blue'],
    ];
    await s.t.rt.ds
      .getRepository(Webhook)
      .update(
        { id: s.v2.id },
        { headerNames: forged.map(([n]) => n), headersEnc: encryptSecret(key, JSON.stringify(forged)) },
      );
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [req] = byVersion(s.rx.requests, '2');
    expect(req.headers['x-team']).toBe('blue');
    expect(req.rawHeaderNames.filter((n) => /^webhook[-_]/i.test(n))).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    expect(req.headers['webhook-id']).toBe(req.headers['svc-webhook-id']);
    expect(verifyWithLibraries(standardSecret(s.v2.secret), req).standard).toMatchObject({ type: 'record.created' });
  });
});
