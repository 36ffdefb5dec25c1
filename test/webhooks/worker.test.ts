import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer, type World } from '../helpers/harness.js';
import type { Actor } from '../../src/domain/actor.js';
import { createRecord } from '../../src/domain/records.js';
import { afterCommit, inTransaction } from '../../db/transaction.js';
import type { Runtime } from '../../src/runtime.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { claimDueDeliveries, newDeliveryRow, settleDeliveries } from '../../src/webhooks/deliveryStore.js';
import { snapshotOf } from '../../src/webhooks/payload.js';
import { EventRow, WebhookDelivery } from '../../db/entities/index.js';
import { addWebhook, deliveryRows, startReceiver } from './helpers.js';

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

/** Waits for a condition without asserting any duration (the test's own timeout bounds it). */
async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 10));
}

describe('after-commit hooks (db/transaction.ts)', () => {
  it('run after the commit, see the committed rows, and never run on a rollback', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const seen: string[] = [];
    let countInHook = -1;
    const rec = await inTransaction(t.rt.services, async (m) => {
      const r = await createRecord(m, t.rt.services.now(), actorOf(w), w.roomId, { title: 'committed' });
      expect(
        afterCommit(m, () => {
          seen.push('hook');
          // a statement started here runs after the commit
          void t.rt.ds
            .getRepository(EventRow)
            .countBy({ objectId: r.id })
            .then((n) => (countInHook = n));
        }),
      ).toBe(true);
      seen.push('body done');
      return r;
    });
    seen.push('caller resumed');
    expect(seen).toEqual(['body done', 'hook', 'caller resumed']);
    await until(() => countInHook >= 0);
    expect(countInHook).toBe(1);
    expect(rec.id).toBeTruthy();

    await expect(
      inTransaction(t.rt.services, async (m) => {
        afterCommit(m, () => seen.push('rolled back hook'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).not.toContain('rolled back hook');
    // outside a transaction of inTransaction there is nothing to hook into: the caller falls back (polling)
    expect(afterCommit(t.rt.ds.manager, () => seen.push('never'))).toBe(false);
  });
});

describe('delivery worker loop', () => {
  it('delivers right after a commit without waiting for its poll (pollMs 60 s)', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    await addWebhook(t.rt, w.roomId, rx.url);
    const worker = createWebhookWorker({ services: t.rt.services, pollMs: 60_000 });
    worker.start();
    try {
      // each write is delivered before the next one is made; after the first round the worker only
      // sleeps (60 s poll) unless a commit wakes it, and the test times out well before 60 s
      for (let i = 1; i <= 3; i++) {
        await newRecord(t.rt, w, `R${i}`);
        await until(() => rx.requests.length === i);
      }
    } finally {
      await worker.stop();
    }
    expect(new Set(rx.requests.map((r) => r.headers['svc-webhook-delivery'])).size).toBe(3);
  });

  it('still finds commits it was not told about (another process, or a plain transaction) by polling', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    // an event written before the webhook existed: no delivery, no signal
    const rec = await newRecord(t.rt, w, 'before the webhook');
    const eventRow = await t.rt.ds.getRepository(EventRow).findOneByOrFail({ objectId: rec.id });
    const hook = await addWebhook(t.rt, w.roomId, rx.url);
    const worker = createWebhookWorker({ services: t.rt.services, pollMs: 20 });
    worker.start();
    try {
      // a delivery row committed without the outbox's after-commit signal, as another process's commit would be
      await inTransaction(t.rt.services, (m) =>
        m.insert(WebhookDelivery, newDeliveryRow(m, hook.id, snapshotOf(eventRow), t.rt.services.now())),
      );
      await until(() => rx.requests.length === 1);
    } finally {
      await worker.stop();
    }
    expect(rx.requests[0].headers['svc-webhook-id']).toBe(eventRow.id);
  });

  it('records every attempt of a busy run, each row once, and holds no lease after stop()', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    const hooks = [await addWebhook(t.rt, w.roomId, `${rx.url}?a`), await addWebhook(t.rt, w.roomId, `${rx.url}?b`)];
    const worker = createWebhookWorker({ services: t.rt.services, batchSize: 4, maxInFlight: 6 });
    worker.start();
    try {
      for (let i = 0; i < 15; i++) await newRecord(t.rt, w, `R${i}`);
      await until(async () => (await t.rt.ds.getRepository(WebhookDelivery).countBy({ state: 'succeeded' })) === 30);
    } finally {
      await worker.stop();
    }
    expect(rx.requests).toHaveLength(30);
    expect(new Set(rx.requests.map((r) => r.headers['svc-webhook-delivery'])).size).toBe(30);
    for (const h of hooks) {
      const rows = await deliveryRows(t.rt, h.id);
      expect(rows).toHaveLength(15);
      for (const row of rows)
        expect(row).toMatchObject({
          state: 'succeeded',
          attempts: 1,
          statusCode: 200,
          leaseOwner: null,
          leaseUntil: null,
        });
    }
  });

  it('keeps delivering to other receivers while one receiver hangs, and gives the hanging leases back on stop()', async () => {
    await using t = await startTestServer();
    await using slow = await startReceiver(['hang', 'hang', 'hang']);
    await using fast = await startReceiver();
    const w = await createWorld(t.rt);
    const slowHook = await addWebhook(t.rt, w.roomId, slow.url);
    const fastHook = await addWebhook(t.rt, w.roomId, fast.url);
    // one batch holds a slow and a fast delivery; the old "await the whole batch" loop would wait for the slow one
    const worker = createWebhookWorker({
      services: t.rt.services,
      batchSize: 2,
      maxInFlight: 4,
      pollMs: 20,
      timeouts: { connectMs: 5000, responseMs: 60_000 },
    });
    for (let i = 0; i < 3; i++) await newRecord(t.rt, w, `R${i}`);
    worker.start();
    try {
      // the fast receiver's answers recorded, not only received: stop() gives back whatever is still in flight
      await until(
        async () =>
          fast.requests.length === 3 &&
          slow.requests.length === 3 &&
          (await deliveryRows(t.rt, fastHook.id)).every((r) => r.state === 'succeeded'),
      );
      // all three slow attempts are still open: the fast receiver did not wait for them
      expect(slow.openConnections).toBeGreaterThan(0);
    } finally {
      await worker.stop();
    }
    expect((await deliveryRows(t.rt, fastHook.id)).map((r) => r.state)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    for (const row of await deliveryRows(t.rt, slowHook.id)) {
      expect(row).toMatchObject({ state: 'pending', attempts: 0, leaseOwner: null, leaseUntil: null });
    }
  });
});

describe('settling a batch (one transaction)', () => {
  it('writes every result and every release, and leaves alone a row whose lease another worker took over', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    const hook = await addWebhook(t.rt, w.roomId, rx.url);
    for (let i = 0; i < 4; i++) await newRecord(t.rt, w, `R${i}`);
    const now = t.rt.services.now();
    const [a, b, c, d] = await claimDueDeliveries(t.rt.services, 'me', now, new Date(now.getTime() + 60_000), 10);
    // d's lease expired and another worker holds it now
    await t.rt.ds.getRepository(WebhookDelivery).update({ id: d.id }, { leaseOwner: 'other' });
    const common = { statusCode: null, durationMs: null, responseBody: null };
    const written = await settleDeliveries(t.rt.services, 'me', [
      {
        id: a.id,
        update: {
          ...common,
          state: 'succeeded',
          attempts: 1,
          statusCode: 200,
          durationMs: 3,
          responseBody: 'ok',
          lastError: null,
          finalizedAt: '2026-06-10T12:00:01.000Z',
        },
      },
      {
        id: b.id,
        update: {
          ...common,
          state: 'pending',
          attempts: 1,
          lastError: 'timeout',
          nextAttemptAt: '2026-06-10T12:00:02.000Z',
        },
      },
      { id: c.id, update: null },
      {
        id: d.id,
        update: {
          ...common,
          state: 'failed',
          attempts: 1,
          lastError: 'network_error',
          finalizedAt: '2026-06-10T12:00:01.000Z',
        },
      },
    ]);
    expect(written).toEqual([true, true, true, false]);
    const rows = new Map((await deliveryRows(t.rt, hook.id)).map((r) => [r.id, r]));
    expect(rows.get(a.id)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      statusCode: 200,
      durationMs: 3,
      responseBody: 'ok',
      leaseOwner: null,
      finalizedAt: '2026-06-10T12:00:01.000Z',
    });
    expect(rows.get(b.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: 'timeout',
      nextAttemptAt: '2026-06-10T12:00:02.000Z',
      leaseOwner: null,
      finalizedAt: null,
    });
    expect(rows.get(c.id)).toMatchObject({
      state: 'pending',
      attempts: 0,
      leaseOwner: null,
      leaseUntil: null,
      nextAttemptAt: c.nextAttemptAt,
    });
    expect(rows.get(d.id)).toMatchObject({ state: 'pending', attempts: 0, leaseOwner: 'other' });
  });
});
