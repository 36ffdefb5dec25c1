import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/harness.js';
import { WEBHOOK_LEGACY_HEADER_SUNSET_AT } from '../../src/webhooks/constants.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { addWebhook, type Captured, testClock, startWebhookWorld } from './helpers.js';

const hmac = (key: string, data: string | Buffer) => createHmac('sha256', key).update(data).digest('hex');
const PROTECTED = /^(svc-webhook-|x-webhook-|sunset$|deprecation$)/;
const protectedHeaders = (c: Captured) =>
  Object.fromEntries(
    Object.entries(c.headers)
      .filter(([k]) => PROTECTED.test(k))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
const byVersion = (reqs: Captured[], v: string) => reqs.filter((r) => r.headers['svc-webhook-api-version'] === v);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function setup(start: string) {
  const clock = testClock(start);
  const world = await startWebhookWorld({ clock });
  const v2 = await addWebhook(world.t.rt, world.w.roomId, `${world.rx.url}?v=2`);
  const v1 = await addWebhook(world.t.rt, world.w.roomId, `${world.rx.url}?v=1`, { apiVersion: '2025-10-23' });
  return { ...world, clock, v1, v2 };
}

describe('webhook bodies and headers', () => {
  it('sends the exact v2 body and Svc-Webhook-* headers only, signed over <timestamp>.<raw body>', async () => {
    await using s = await setup('2026-06-10T12:00:00.000Z');
    const rec = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Weekly' } });
    expect(rec.status).toBe(201);
    s.clock.advance(1500);
    expect(await s.worker.runOnce()).toBe(2);

    const events = await call(s.t, 'GET', '/v1/events?type=record.created', { key: s.w.key });
    const evt = events.body.data[0];
    expect(evt.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);

    const [req] = byVersion(s.rx.requests, '2026-06-09');
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook?v=2');
    const expected = {
      id: evt.id,
      type: 'record.created',
      apiVersion: '2026-06-09',
      createdAt: '2026-06-10T12:00:00.000Z',
      organizationId: s.w.orgId,
      roomId: s.w.roomId,
      data: { object: { id: rec.body.id, type: 'record' } },
    };
    expect(req.body.toString('utf8')).toBe(JSON.stringify(expected));
    const ts = String(Math.floor(s.clock.now().getTime() / 1000));
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Svc-Webhook/2.0');
    const delivery = req.headers['svc-webhook-delivery'] as string;
    expect(delivery).toMatch(UUID);
    expect(protectedHeaders(req)).toEqual({
      'svc-webhook-api-version': '2026-06-09',
      'svc-webhook-delivery': delivery,
      'svc-webhook-id': evt.id,
      'svc-webhook-signature': `v1=${hmac(s.v2.secret, `${ts}.${req.body.toString('utf8')}`)}`,
      'svc-webhook-timestamp': ts,
      'svc-webhook-type': 'record.created',
    });
    expect(
      verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: [s.v2.secret], now: s.clock.now }),
    ).toMatchObject({
      ok: true,
      eventId: evt.id,
      deliveryId: delivery,
    });
  });

  it('sends the v1 body with exactly event, timestamp, roomId, data, deliveryId and the legacy headers before the sunset', async () => {
    await using s = await setup('2026-06-10T12:00:00.000Z');
    const rec = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Weekly' } });
    await s.worker.runOnce();
    const [req] = byVersion(s.rx.requests, '2025-10-23');
    const raw = req.body.toString('utf8');
    const delivery = req.headers['svc-webhook-delivery'] as string;
    const body = JSON.parse(raw);
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'roomId', 'data', 'deliveryId']);
    expect(raw).toBe(
      JSON.stringify({
        event: 'record.created',
        timestamp: '2026-06-10T12:00:00.000Z',
        roomId: s.w.roomId,
        data: { object: { id: rec.body.id, type: 'record' } },
        deliveryId: delivery,
      }),
    );
    const ts = req.headers['svc-webhook-timestamp'] as string;
    expect(req.headers['user-agent']).toBe('Svc-Webhook/1.0');
    expect(protectedHeaders(req)).toEqual({
      deprecation: 'true',
      sunset: 'Thu, 31 Dec 2026 00:00:00 GMT',
      'svc-webhook-api-version': '2025-10-23',
      'svc-webhook-delivery': delivery,
      'svc-webhook-id': req.headers['svc-webhook-id'],
      'svc-webhook-signature': `v1=${hmac(s.v1.secret, `${ts}.${raw}`)}`,
      'svc-webhook-timestamp': ts,
      'svc-webhook-type': 'record.created',
      // rule 4: HMAC over the raw body actually sent
      'x-webhook-signature': hmac(s.v1.secret, req.body),
      'x-webhook-event': 'record.created',
      'x-webhook-delivery-id': delivery,
    });
  });

  it('sends no legacy header at or after WEBHOOK_LEGACY_HEADER_SUNSET_AT, and still does a millisecond before', async () => {
    await using s = await setup('2026-12-30T23:59:59.999Z');
    expect(WEBHOOK_LEGACY_HEADER_SUNSET_AT.toISOString()).toBe('2026-12-31T00:00:00.000Z');
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Before' } });
    await s.worker.runOnce();
    expect(byVersion(s.rx.requests, '2025-10-23')[0].headers['x-webhook-signature']).toBeDefined();

    s.clock.set('2026-12-31T00:00:00.000Z');
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'At' } });
    await s.worker.runOnce();
    s.clock.set('2027-03-01T00:00:00.000Z');
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'After' } });
    await s.worker.runOnce();
    const v1 = byVersion(s.rx.requests, '2025-10-23');
    expect(v1).toHaveLength(3);
    for (const req of v1.slice(1)) {
      expect(Object.keys(protectedHeaders(req)).sort()).toEqual([
        'svc-webhook-api-version',
        'svc-webhook-delivery',
        'svc-webhook-id',
        'svc-webhook-signature',
        'svc-webhook-timestamp',
        'svc-webhook-type',
      ]);
      expect(JSON.parse(req.body.toString()).event).toBe('record.created');
    }
  });

  it('gives v1 rows events outside the v1 enumeration with the v1 body and v2 headers only', async () => {
    await using s = await setup('2026-06-10T12:00:00.000Z');
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/messages`, { key: s.w.key, body: { body: 'hello' } });
    const task = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/tasks`, { key: s.w.key, body: { title: 'Do it' } });
    const rec = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records/${rec.body.id}/approval/request`, { key: s.w.key });
    await call(s.t, 'PATCH', `/v1/rooms/${s.w.roomId}/tasks/${task.body.id}`, {
      key: s.w.key,
      body: { status: 'done' },
    });
    while (await s.worker.runOnce());
    const v1 = byVersion(s.rx.requests, '2025-10-23');
    const legacy = (type: string) =>
      v1.find((r) => r.headers['svc-webhook-type'] === type)!.headers['x-webhook-signature'] !== undefined;
    expect(v1.map((r) => r.headers['svc-webhook-type']).sort()).toEqual([
      'approval.requested',
      'message.created',
      'record.approval_requested',
      'record.created',
      'task.created',
      'task.updated',
    ]);
    expect(legacy('message.created')).toBe(false);
    expect(legacy('task.created')).toBe(false);
    expect(legacy('record.approval_requested')).toBe(false);
    expect(legacy('approval.requested')).toBe(true);
    expect(legacy('task.updated')).toBe(true);
    expect(legacy('record.created')).toBe(true);
    for (const r of v1)
      expect(Object.keys(JSON.parse(r.body.toString()))).toEqual([
        'event',
        'timestamp',
        'roomId',
        'data',
        'deliveryId',
      ]);
    // v2 receives every one of them too, with v2 bodies and the aliases' data.object a record
    const v2 = byVersion(s.rx.requests, '2026-06-09');
    const alias = JSON.parse(
      v2.find((r) => r.headers['svc-webhook-type'] === 'record.approval_requested')!.body.toString(),
    );
    expect(alias.data).toEqual({ object: { id: rec.body.id, type: 'record' } });
    expect(v2.every((r) => r.headers['x-webhook-signature'] === undefined && r.headers.sunset === undefined)).toBe(
      true,
    );
  });

  it('lets custom headers override Content-Type and User-Agent only, and adds the others', async () => {
    await using s = await setup('2026-06-10T12:00:00.000Z');
    const custom = await addWebhook(s.t.rt, s.w.roomId, `${s.rx.url}?custom`, {
      headers: [
        ['Content-Type', 'application/cloudevents+json'],
        ['User-Agent', 'Acme-Gateway/3'],
        ['Authorization', 'Bearer rx-token'],
      ],
    });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'Weekly' } });
    await s.worker.runOnce();
    const req = s.rx.requests.find((r) => r.path === '/hook?custom')!;
    expect(req.headers['content-type']).toBe('application/cloudevents+json');
    expect(req.headers['user-agent']).toBe('Acme-Gateway/3');
    expect(req.headers.authorization).toBe('Bearer rx-token');
    expect(
      verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: [custom.secret], now: s.clock.now }).ok,
    ).toBe(true);
  });

  it('never delivers room.created (preview) and fires every stable event of a REST write', async () => {
    await using s = await setup('2026-06-10T12:00:00.000Z');
    await call(s.t, 'POST', '/v1/rooms', { key: s.w.key, body: { name: 'New room' } });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/members`, { key: s.w.key, body: { userId: s.w.member.id } });
    while (await s.worker.runOnce());
    const types = byVersion(s.rx.requests, '2026-06-09').map((r) => r.headers['svc-webhook-type']);
    expect(types).not.toContain('room.created');
  });
});
