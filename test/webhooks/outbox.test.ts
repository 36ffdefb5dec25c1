import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer, type World } from '../helpers/harness.js';
import type { Actor } from '../../src/domain/actor.js';
import { activeWebhooksOf, requireRoom, type RoomAccess } from '../../src/domain/access.js';
import { emitEvent } from '../../src/domain/events.js';
import { createRecord } from '../../src/domain/records.js';
import { inTransaction } from '../../db/transaction.js';
import type { Runtime } from '../../src/runtime.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { claimDueDeliveries } from '../../src/webhooks/deliveryStore.js';
import { deleteWebhook, setWebhookActive } from '../../src/webhooks/webhookConfig.js';
import { EventRow, Room, WebhookDelivery } from '../../db/entities/index.js';
import { addWebhook, deliveryRows, startReceiver, testClock } from './helpers.js';

const actorOf = (w: World): Actor => ({
  kind: 'app',
  userId: w.owner.id,
  organizationId: w.orgId,
  billingEntity: `org:${w.orgId}`,
  scopes: [],
  credential: { method: 'api_key', id: w.keyId },
  plan: 'default',
});
const newRecord = (rt: Runtime, w: World, title = 'R') =>
  inTransaction(rt.services, (m) => createRecord(m, rt.services.now(), actorOf(w), w.roomId, { title }));

async function setup() {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const t = await startTestServer({ now: clock.now });
  const w = await createWorld(t.rt);
  const rx = await startReceiver();
  const hook = await addWebhook(t.rt, w.roomId, rx.url);
  const close = async () => {
    await rx.close();
    await t.close();
  };
  return { clock, t, w, rx, hook, [Symbol.asyncDispose]: close };
}

describe('transactional outbox and leases', () => {
  it("queues one delivery per active webhook of the room, in the write's transaction", async () => {
    await using s = await setup();
    const second = await addWebhook(s.t.rt, s.w.roomId, `${s.rx.url}?2`);
    const off = await addWebhook(s.t.rt, s.w.roomId, `${s.rx.url}?off`);
    await setWebhookActive(s.t.rt.services, off.id, false);
    const rec = await newRecord(s.t.rt, s.w);
    const all = await s.t.rt.ds.getRepository(WebhookDelivery).find();
    expect(all.map((d) => d.webhookId).sort()).toEqual([s.hook.id, second.id].sort());
    const event = await s.t.rt.ds.getRepository(EventRow).findOneByOrFail({ type: 'record.created' });
    for (const d of all) {
      expect(d).toMatchObject({
        eventId: event.id,
        eventType: 'record.created',
        state: 'pending',
        attempts: 0,
        maxAttempts: 4,
      });
      expect(JSON.parse(d.payload)).toEqual({
        id: event.id,
        type: 'record.created',
        createdAt: event.createdAt,
        organizationId: s.w.orgId,
        roomId: s.w.roomId,
        object: { type: 'record', id: rec.id },
      });
    }
    expect(new Set(all.map((d) => d.deliveryId)).size).toBe(2);
  });

  it("counts the room's active webhooks in a change's access check, and queues nothing once none is left", async () => {
    await using s = await setup();
    const off = await addWebhook(s.t.rt, s.w.roomId, `${s.rx.url}?off`);
    await setWebhookActive(s.t.rt.services, off.id, false);
    const counted = (need: RoomAccess) =>
      inTransaction(s.t.rt.services, async (m) =>
        activeWebhooksOf(await requireRoom(m, actorOf(s.w), s.w.roomId, need)),
      );
    // a change reads the count (the paused webhook not in it); a read leaves it unknown, and the outbox looks up
    expect([await counted('write'), await counted('manage'), await counted('read')]).toEqual([1, 1, undefined]);
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    expect(await counted('write')).toBe(0);
    await newRecord(s.t.rt, s.w);
    expect(await s.t.rt.ds.getRepository(EventRow).countBy({ type: 'record.created' })).toBe(1);
    expect(await s.t.rt.ds.getRepository(WebhookDelivery).count()).toBe(0);
    await setWebhookActive(s.t.rt.services, off.id, true);
    await newRecord(s.t.rt, s.w);
    expect((await s.t.rt.ds.getRepository(WebhookDelivery).find()).map((d) => d.webhookId)).toEqual([off.id]);
  });

  it('commits nothing when the write fails: no event, no delivery', async () => {
    await using s = await setup();
    await expect(
      inTransaction(s.t.rt.services, async (m) => {
        await createRecord(m, s.t.rt.services.now(), actorOf(s.w), s.w.roomId, { title: 'doomed' });
        throw new Error('the write fails after emitting');
      }),
    ).rejects.toThrow('the write fails');
    expect(await s.t.rt.ds.getRepository(EventRow).count()).toBe(0);
    expect(await s.t.rt.ds.getRepository(WebhookDelivery).count()).toBe(0);
  });

  it('never queues the preview room.created, even for a room with a webhook', async () => {
    await using s = await setup();
    await inTransaction(s.t.rt.services, async (m) => {
      const room = await m.findOneByOrFail(Room, { id: s.w.roomId });
      await emitEvent(m, {
        type: 'room.created',
        room,
        object: { type: 'room', id: room.id },
        actor: actorOf(s.w),
        now: s.clock.now(),
      });
    });
    expect(await s.t.rt.ds.getRepository(EventRow).countBy({ type: 'room.created' })).toBe(1);
    expect(await s.t.rt.ds.getRepository(WebhookDelivery).count()).toBe(0);
  });

  it('lets two workers share the queue without delivering anything twice', async () => {
    await using s = await setup();
    for (let i = 0; i < 6; i++) await newRecord(s.t.rt, s.w, `R${i}`);
    const a = createWebhookWorker({ services: s.t.rt.services, batchSize: 4 });
    const b = createWebhookWorker({ services: s.t.rt.services, batchSize: 4 });
    const [na, nb] = await Promise.all([a.runOnce(), b.runOnce()]);
    const [na2, nb2] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(na + nb + na2 + nb2).toBe(6);
    expect(s.rx.requests).toHaveLength(6);
    expect(new Set(s.rx.requests.map((r) => r.headers['svc-webhook-delivery'])).size).toBe(6);
    expect((await deliveryRows(s.t.rt, s.hook.id)).every((r) => r.state === 'succeeded' && r.leaseOwner === null)).toBe(
      true,
    );
  });

  it('takes over the deliveries of a crashed worker once its lease expires', async () => {
    await using s = await setup();
    await newRecord(s.t.rt, s.w);
    const now = s.clock.now();
    const stolen = await claimDueDeliveries(
      s.t.rt.services,
      'crashed-worker',
      now,
      new Date(now.getTime() + 60_000),
      10,
    );
    expect(stolen).toHaveLength(1);
    const worker = createWebhookWorker({ services: s.t.rt.services });
    expect(await worker.runOnce()).toBe(0);
    s.clock.advance(59_999);
    expect(await worker.runOnce()).toBe(0);
    s.clock.advance(1);
    expect(await worker.runOnce()).toBe(1);
    expect(s.rx.requests).toHaveLength(1);
    expect((await deliveryRows(s.t.rt, s.hook.id))[0]).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      leaseOwner: null,
    });
  });

  it('gives leases back on stop(): the interrupted attempt does not count and the next worker delivers', async () => {
    await using s = await setup();
    s.rx.script.push('hang');
    await newRecord(s.t.rt, s.w);
    const worker = createWebhookWorker({
      services: s.t.rt.services,
      timeouts: { connectMs: 5000, responseMs: 30_000 },
    });
    const round = worker.runOnce();
    while (s.rx.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    await worker.stop();
    expect(await round).toBe(1);
    expect((await deliveryRows(s.t.rt, s.hook.id))[0]).toMatchObject({
      state: 'pending',
      attempts: 0,
      leaseOwner: null,
      leaseUntil: null,
    });
    const next = createWebhookWorker({ services: s.t.rt.services });
    expect(await next.runOnce()).toBe(1);
    expect(s.rx.requests).toHaveLength(2);
    expect(s.rx.requests[1].headers['svc-webhook-delivery']).toBe(s.rx.requests[0].headers['svc-webhook-delivery']);
  });

  it('finalizes queued deliveries of a deactivated webhook unsent, and drops those of a deleted one', async () => {
    await using s = await setup();
    await newRecord(s.t.rt, s.w);
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    const worker = createWebhookWorker({ services: s.t.rt.services });
    await worker.runOnce();
    expect(s.rx.requests).toHaveLength(0);
    expect((await deliveryRows(s.t.rt, s.hook.id))[0]).toMatchObject({
      state: 'failed',
      lastError: 'webhook_inactive',
      statusCode: null,
    });
    await setWebhookActive(s.t.rt.services, s.hook.id, true);
    await newRecord(s.t.rt, s.w);
    await deleteWebhook(s.t.rt.services, s.hook.id);
    expect(await worker.runOnce()).toBe(0);
    expect(await s.t.rt.ds.getRepository(WebhookDelivery).count()).toBe(0);
  });
});
