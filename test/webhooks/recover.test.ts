import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, issueKey, startTestServer, type World } from '../helpers/harness.js';
import { connectMcp } from '../mcp/mcpClient.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { recoverWebhookDeliveries } from '../../src/webhooks/recover.js';
import { setWebhookActive } from '../../src/webhooks/webhookConfig.js';
import { addWebhook, deliveryRows, startReceiver, testClock, type TestClock, startWebhookWorld } from './helpers.js';
import type { TestServer } from '../helpers/harness.js';

// `POST /v1/rooms/{roomId}/webhooks/{webhookId}/recover`: every event whose delivery finally failed since a
// time, queued once more through the outbox.

const START = '2026-06-10T12:00:00.000Z';

async function setup(o: { dataDir?: string; clock?: TestClock } = {}) {
  const clock = o.clock ?? testClock(START);
  const world = await startWebhookWorld({ clock, dataDir: o.dataDir });
  const hook = await addWebhook(world.t.rt, world.w.roomId, world.rx.url);
  return { ...world, clock, hook, base: `/v1/rooms/${world.w.roomId}/webhooks/${hook.id}` };
}

/** Writes `n` records; each is one event for the room's webhooks. */
async function records(t: TestServer, w: World, n: number, prefix = 'R'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: `${prefix}${i}` } });
    expect(r.status).toBe(201);
    ids.push(r.body.id);
  }
  return ids;
}

describe('recover: redeliver every delivery that finally failed since a time', () => {
  it('queues each failed event once (same event id, new delivery id), then only what failed again', async () => {
    await using s = await setup();
    await records(s.t, s.w, 1, 'before');
    await s.worker.runOnce(); // delivered: the receiver has it
    s.clock.advance(60_000);
    const since = s.clock.now().toISOString();
    // the receiver is down: 400 finalizes at once (no retry)
    s.rx.script.push({ status: 400 }, { status: 400 }, { status: 400 });
    await records(s.t, s.w, 3, 'down');
    await s.worker.runOnce();
    const failed = (await deliveryRows(s.t.rt, s.hook.id)).filter((r) => r.state === 'failed');
    expect(failed).toHaveLength(3);
    s.clock.advance(60_000);

    const r = await call(s.t, 'POST', `${s.base}/recover`, { key: s.w.key, body: { since } });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ queued: 3 });
    // asked again at once (a loop): those are pending, nothing is queued twice
    expect((await call(s.t, 'POST', `${s.base}/recover`, { key: s.w.key, body: { since } })).body).toEqual({
      queued: 0,
    });

    // the worker sends them: the second fails again
    s.rx.script.push({ status: 200 }, { status: 400 }, { status: 200 });
    const sentBefore = s.rx.requests.length;
    expect(await s.worker.runOnce()).toBe(3);
    const resent = s.rx.requests.slice(sentBefore);
    expect(resent.map((q) => q.headers['svc-webhook-id']).sort()).toEqual(failed.map((f) => f.eventId).sort());
    expect(resent.map((q) => q.headers['webhook-id']).sort()).toEqual(failed.map((f) => f.eventId).sort());
    const oldDeliveryIds = new Set(failed.map((f) => f.deliveryId));
    expect(resent.every((q) => !oldDeliveryIds.has(q.headers['svc-webhook-delivery'] as string))).toBe(true);
    const rows = await deliveryRows(s.t.rt, s.hook.id);
    const recovered = rows.filter((x) => x.redeliveryOf);
    expect(recovered.map((x) => x.redeliveryOf).sort()).toEqual(failed.map((f) => f.id).sort());

    // over the same span: only the one that failed again
    s.clock.advance(60_000);
    expect((await call(s.t, 'POST', `${s.base}/recover`, { key: s.w.key, body: { since } })).body).toEqual({
      queued: 1,
    });
    await s.worker.runOnce();
    expect((await call(s.t, 'POST', `${s.base}/recover`, { key: s.w.key, body: { since } })).body).toEqual({
      queued: 0,
    });
    // the event delivered before the outage was never sent again
    const perEvent = new Map<string, number>();
    for (const q of s.rx.requests)
      perEvent.set(
        q.headers['svc-webhook-id'] as string,
        (perEvent.get(q.headers['svc-webhook-id'] as string) ?? 0) + 1,
      );
    expect([...perEvent.values()].sort()).toEqual([1, 2, 2, 3]);
  });

  it('two recovers at once queue each event once', async () => {
    await using s = await setup();
    const since = s.clock.now().toISOString();
    s.rx.script.push(...Array.from({ length: 5 }, () => ({ status: 410 })));
    await records(s.t, s.w, 5);
    await s.worker.runOnce();
    s.clock.advance(1000);
    const both = await Promise.all([
      call(s.t, 'POST', `${s.base}/recover`, { key: s.w.key, body: { since } }),
      recoverWebhookDeliveries(s.t.rt.services, undefined, { webhookId: s.hook.id, since }),
    ]);
    expect(both[0].status).toBe(202);
    expect(both[0].body.queued + both[1].queued).toBe(5);
    expect((await deliveryRows(s.t.rt, s.hook.id)).filter((r) => r.state === 'pending')).toHaveLength(5);
  });

  it('queued rows are outbox rows: a restart before the worker ran loses none and resends nothing that succeeded', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-recover-'));
    const clock = testClock(START);
    let hookId: string;
    let base: string;
    let key: string;
    const since = START;
    {
      await using s = await setup({ dataDir, clock });
      hookId = s.hook.id;
      base = s.base;
      key = s.w.key;
      s.rx.script.push({ status: 200 }, { status: 400 }, { status: 400 });
      await records(s.t, s.w, 3);
      await s.worker.runOnce();
      clock.advance(1000);
      expect((await call(s.t, 'POST', `${base}/recover`, { key, body: { since } })).body).toEqual({ queued: 2 });
      // the process ends here, before any worker took the queued rows
    }
    try {
      const t = await startTestServer({ now: clock.now, dataDir });
      const rx = await startReceiver();
      try {
        // the receiver moved: point the webhook at the new one (its port changed with the restart)
        await t.rt.ds.getRepository('Webhook').update({ id: hookId }, { url: rx.url });
        const worker = createWebhookWorker({ services: t.rt.services });
        try {
          expect(await worker.runOnce()).toBe(2);
        } finally {
          await worker.stop();
        }
        const rows = await deliveryRows(t.rt, hookId);
        const succeededEvent = rows.find((r) => r.state === 'succeeded' && !r.redeliveryOf)!.eventId;
        expect(rx.requests.map((q) => q.headers['svc-webhook-id'])).not.toContain(succeededEvent);
        expect(rx.requests).toHaveLength(2);
        expect((await call(t, 'POST', `${base}/recover`, { key, body: { since } })).body).toEqual({ queued: 0 });
      } finally {
        await rx.close();
        await t.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a since in the future, older than the retention, or unparseable, and an inactive webhook; nothing is queued', async () => {
    await using s = await setup();
    s.rx.script.push({ status: 400 });
    await records(s.t, s.w, 1);
    await s.worker.runOnce();
    s.clock.advance(1000);
    const rowsBefore = (await deliveryRows(s.t.rt, s.hook.id)).length;
    const recover = (body: unknown, key = s.w.key) => call(s.t, 'POST', `${s.base}/recover`, { key, body });
    const future = await recover({ since: '2026-06-10T13:00:00Z' });
    expect(future.status).toBe(400);
    expect(future.body.error).toMatchObject({ code: 'rule_violation', message: expect.stringMatching(/future/) });
    const old = await recover({ since: '2026-05-01T00:00:00Z' });
    expect(old.status).toBe(400);
    expect(old.body.error).toMatchObject({
      code: 'rule_violation',
      message: expect.stringMatching(/30-day retention/),
    });
    for (const bad of [{ since: 'yesterday' }, { since: '' }, { since: 12 }, {}, { since: START, extra: 1 }]) {
      const r = await recover(bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.code).toBe('validation_error');
    }
    const readOnly = await issueKey(s.t.rt, {
      userId: s.w.owner.id,
      organizationId: s.w.orgId,
      scopes: ['webhooks:read'],
    });
    expect((await recover({ since: START }, readOnly.token)).status).toBe(403);
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    const inactive = await recover({ since: START });
    expect(inactive.status).toBe(409);
    expect(inactive.body.error.code).toBe('webhook_inactive');
    expect(
      (
        await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/webhooks/wh_01KAR3V6X5Q2Z8N4M7P9W1T3YB/recover`, {
          key: s.w.key,
          body: { since: START },
        })
      ).status,
    ).toBe(404);
    expect((await deliveryRows(s.t.rt, s.hook.id)).length).toBe(rowsBefore);
  });

  it('is one operation over REST, OpenAPI and MCP (recover_webhook_deliveries); the webhook list shows filter and throttle', async () => {
    await using s = await setup();
    const since = s.clock.now().toISOString();
    s.rx.script.push({ status: 400 });
    await records(s.t, s.w, 1);
    await s.worker.runOnce();
    await using c = await connectMcp(s.t, { token: s.w.key });
    const r = await c.callTool({
      name: 'recover_webhook_deliveries',
      arguments: { roomId: s.w.roomId, webhookId: s.hook.id, since },
    });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ queued: 1 });
    const listed = await c.callTool({ name: 'list_webhooks', arguments: { roomId: s.w.roomId } });
    expect((listed.structuredContent as any).data[0]).toMatchObject({
      id: s.hook.id,
      eventTypes: [],
      maxDeliveriesPerSecond: null,
    });
    const bad = await c.callTool({
      name: 'recover_webhook_deliveries',
      arguments: { roomId: s.w.roomId, webhookId: s.hook.id, since: '2030-01-01T00:00:00Z' },
    });
    expect(bad.isError).toBe(true);

    const doc = (await call(s.t, 'GET', '/v1/openapi.json')).body;
    const op = doc.paths['/v1/rooms/{roomId}/webhooks/{webhookId}/recover'].post;
    expect(Object.keys(op.responses)).toContain('202');
    const schema = op.requestBody.content['application/json'].schema;
    const body = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
    expect(body.required).toEqual(['since']);
    expect(body.properties.since).toMatchObject({ type: 'string', format: 'date-time' });
    expect(Object.keys(doc.components.schemas.Webhook.properties)).toEqual(
      expect.arrayContaining(['eventTypes', 'maxDeliveriesPerSecond']),
    );
  });
});
