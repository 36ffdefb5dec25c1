import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { webhookCommands } from '../../src/cli/commands/webhooks.js';
import { UsageError } from '../../src/cli/command.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { createWebhook, updateWebhook } from '../../src/webhooks/webhookConfig.js';
import { Webhook } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import { addWebhook, deliveryRows, startReceiver, testClock } from './helpers.js';

const START = '2026-06-10T12:00:00.000Z';

async function setup() {
  const clock = testClock(START);
  const t = await startTestServer({ now: clock.now });
  const w = await createWorld(t.rt);
  const rx = await startReceiver();
  const worker = createWebhookWorker({ services: t.rt.services, batchSize: 50 });
  const close = async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  };
  return { clock, t, w, rx, worker, [Symbol.asyncDispose]: close };
}

/** Runs one operator command in-process, as `svc` does after parsing its options. */
const cli = (
  rt: Parameters<NonNullable<(typeof webhookCommands)[number]['run']>>[1],
  name: string,
  args: Record<string, string>,
) => webhookCommands.find((c) => c.name === name)!.run!(args, rt);

describe('event-type filters', () => {
  it('queues only the chosen stable types; others are never queued nor counted as failures', async () => {
    await using s = await setup();
    const rx2 = await startReceiver([{ status: 500 }]);
    try {
      const { webhook: tasksOnly } = await createWebhook(s.t.rt.services, {
        roomId: s.w.roomId,
        url: s.rx.url,
        eventTypes: ['task.created'],
      });
      const all = await addWebhook(s.t.rt, s.w.roomId, rx2.url);
      expect(
        (await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } })).status,
      ).toBe(201);
      expect(
        (await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/tasks`, { key: s.w.key, body: { title: 'T' } })).status,
      ).toBe(201);
      expect((await deliveryRows(s.t.rt, tasksOnly.id)).map((r) => r.eventType)).toEqual(['task.created']);
      expect((await deliveryRows(s.t.rt, all.id)).map((r) => r.eventType)).toEqual(['record.created', 'task.created']);
      await s.worker.runOnce();
      expect(s.rx.requests.map((q) => q.headers['svc-webhook-type'])).toEqual(['task.created']);
      const row = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: tasksOnly.id });
      expect(row.failingSince).toBeNull();

      // a later update: records now, tasks no more; an empty filter is every type again
      await updateWebhook(s.t.rt.services, tasksOnly.id, { eventTypes: ['record.updated', 'record.created'] });
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/tasks`, { key: s.w.key, body: { title: 'T2' } });
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R2' } });
      expect((await deliveryRows(s.t.rt, tasksOnly.id)).map((r) => r.eventType)).toEqual([
        'task.created',
        'record.created',
      ]);

      const list = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: s.w.key });
      const shown = Object.fromEntries(list.body.data.map((x: any) => [x.id, x.eventTypes]));
      // catalog order, whatever order was given
      expect(shown).toEqual({ [tasksOnly.id]: ['record.created', 'record.updated'], [all.id]: [] });
      await updateWebhook(s.t.rt.services, tasksOnly.id, { eventTypes: [] });
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/tasks`, { key: s.w.key, body: { title: 'T3' } });
      expect((await deliveryRows(s.t.rt, tasksOnly.id)).map((r) => r.eventType)).toEqual([
        'task.created',
        'record.created',
        'task.created',
      ]);
    } finally {
      await rx2.close();
    }
  });

  it('a filter value written by hand that is not a list never fails the write that emits the event', async () => {
    await using s = await setup();
    const hook = await addWebhook(s.t.rt, s.w.roomId, s.rx.url);
    await sql(s.t.rt.ds.manager, 'UPDATE "webhooks" SET "eventTypes" = ? WHERE "id" = ?', ['{not json', hook.id]);
    expect(
      (await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } })).status,
    ).toBe(201);
    expect((await deliveryRows(s.t.rt, hook.id)).map((r) => r.eventType)).toEqual(['record.created']);
  });

  it('refuses a preview or unknown type, through the domain and the CLI; nothing is stored', async () => {
    await using s = await setup();
    const hook = await addWebhook(s.t.rt, s.w.roomId, s.rx.url);
    await expect(
      createWebhook(s.t.rt.services, { roomId: s.w.roomId, url: s.rx.url, eventTypes: ['room.created'] }),
    ).rejects.toMatchObject({
      code: 'validation_error',
      message: expect.stringMatching(/preview/),
      details: { reason: 'preview_event_type' },
    });
    await expect(
      updateWebhook(s.t.rt.services, hook.id, { eventTypes: ['task.created', 'record.exploded'] }),
    ).rejects.toMatchObject({
      code: 'validation_error',
      details: { reason: 'unknown_event_type', eventType: 'record.exploded' },
    });
    await expect(cli(s.t.rt, 'webhook update', { id: hook.id, events: 'webhook.test' })).rejects.toMatchObject({
      code: 'validation_error',
    });
    await expect(
      cli(s.t.rt, 'webhook create', { room: s.w.roomId, url: s.rx.url, events: 'task.created,room.created' }),
    ).rejects.toMatchObject({ code: 'validation_error' });
    expect(await s.t.rt.ds.getRepository(Webhook).count()).toBe(1);
    expect((await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: hook.id })).eventTypes).toBeNull();
  });

  it('svc webhook create / update / recover: filters, throttle and the standard secret', async () => {
    await using s = await setup();
    const created = await cli(s.t.rt, 'webhook create', {
      room: s.w.roomId,
      url: s.rx.url,
      events: 'task.created, record.updated',
      'max-per-second': '20',
    });
    expect(Object.keys(created).sort()).toEqual(['id', 'secret', 'standardSecret']);
    expect(created.standardSecret).toBe(`whsec_${Buffer.from(created.secret as string).toString('base64')}`);
    const id = created.id as string;
    expect(await cli(s.t.rt, 'webhook update', { id, 'max-per-second': 'unlimited' })).toEqual({
      id,
      eventTypes: ['record.updated', 'task.created'],
      maxDeliveriesPerSecond: null,
    });
    expect(await cli(s.t.rt, 'webhook update', { id, events: 'all', 'max-per-second': '5' })).toEqual({
      id,
      eventTypes: [],
      maxDeliveriesPerSecond: 5,
    });
    await expect(cli(s.t.rt, 'webhook update', { id })).rejects.toBeInstanceOf(UsageError);
    await expect(cli(s.t.rt, 'webhook update', { id, 'max-per-second': 'fast' })).rejects.toBeInstanceOf(UsageError);
    await expect(cli(s.t.rt, 'webhook update', { id, 'max-per-second': '-1' })).rejects.toBeInstanceOf(UsageError);
    for (const n of ['0', '1001', '999999999']) {
      await expect(cli(s.t.rt, 'webhook update', { id, 'max-per-second': n })).rejects.toMatchObject({
        code: 'validation_error',
      });
    }
    expect(await cli(s.t.rt, 'webhook recover', { id, since: START })).toEqual({ queued: 0 });
    await expect(cli(s.t.rt, 'webhook recover', { id, since: 'last tuesday' })).rejects.toMatchObject({
      code: 'validation_error',
    });
    await expect(cli(s.t.rt, 'webhook recover', { id })).rejects.toBeInstanceOf(UsageError);
    const rotated = await cli(s.t.rt, 'webhook rotate', { id });
    expect(rotated.nextStandardSecret).toBe(`whsec_${Buffer.from(rotated.nextSecret as string).toString('base64')}`);
    // every option these commands add says what it is for (svc help)
    for (const name of ['webhook create', 'webhook update', 'webhook recover']) {
      const c = webhookCommands.find((x) => x.name === name)!;
      for (const opt of ['events', 'max-per-second', 'since'].filter((o) => o in c.options))
        expect(c.options[opt].description, `${name} --${opt}`).toBeTruthy();
    }
  });
});

describe('throttle per webhook', () => {
  it('holds a throttled webhook to its rate without holding back the others; held rows count no attempt', async () => {
    await using s = await setup();
    const slowRx = await startReceiver();
    try {
      const { webhook: slow } = await createWebhook(s.t.rt.services, {
        roomId: s.w.roomId,
        url: slowRx.url,
        maxDeliveriesPerSecond: 2,
      });
      const fast = await addWebhook(s.t.rt, s.w.roomId, s.rx.url);
      for (let i = 0; i < 6; i++)
        await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: `R${i}` } });

      const sentAt: number[] = [];
      const step = async () => {
        const before = slowRx.requests.length;
        await s.worker.runOnce();
        for (let i = before; i < slowRx.requests.length; i++) sentAt.push(s.clock.now().getTime());
      };
      await step();
      // the unthrottled webhook got all six at once; the throttled one one
      expect(s.rx.requests).toHaveLength(6);
      expect(slowRx.requests).toHaveLength(1);
      const held = (await deliveryRows(s.t.rt, slow.id)).filter((r) => r.state === 'pending');
      expect(held).toHaveLength(5);
      expect(held.every((r) => r.attempts === 0 && r.leaseOwner === null && r.lastError === null)).toBe(true);
      expect(held.map((r) => r.nextAttemptAt).sort()).toEqual(
        [500, 1000, 1500, 2000, 2500].map((ms) => new Date(Date.parse(START) + ms).toISOString()),
      );

      for (let i = 0; i < 12 && slowRx.requests.length < 6; i++) {
        s.clock.advance(250);
        await step();
      }
      expect(slowRx.requests).toHaveLength(6);
      // never more than 2 in any second
      for (const t of sentAt) expect(sentAt.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(2);
      const rows = await deliveryRows(s.t.rt, slow.id);
      expect(rows.every((r) => r.state === 'succeeded' && r.attempts === 1)).toBe(true);
      expect((await deliveryRows(s.t.rt, fast.id)).every((r) => r.state === 'succeeded')).toBe(true);
    } finally {
      await slowRx.close();
    }
  });

  it('refuses a throttle of 0, negative, fractional or absurd; the list shows it', async () => {
    await using s = await setup();
    for (const bad of [0, -3, 1.5, 1001, Number.MAX_SAFE_INTEGER, Number.NaN]) {
      await expect(
        createWebhook(s.t.rt.services, { roomId: s.w.roomId, url: s.rx.url, maxDeliveriesPerSecond: bad }),
      ).rejects.toMatchObject({ code: 'validation_error', details: { field: 'maxDeliveriesPerSecond' } });
    }
    const { webhook } = await createWebhook(s.t.rt.services, {
      roomId: s.w.roomId,
      url: s.rx.url,
      maxDeliveriesPerSecond: 1000,
    });
    const list = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: s.w.key });
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: webhook.id, maxDeliveriesPerSecond: 1000, eventTypes: [] }),
    ]);
  });
});
