import { describe, expect, it } from 'vitest';
import { failKeyCompletion } from '../helpers/faults.js';
import { call, type TestServer } from '../helpers/harness.js';
import { addWebhook, deliveryRows, startWebhookWorld, testClock } from './helpers.js';

// The three webhook writes that send or queue (test, redeliver, recover) store an Idempotency-Key's answer in
// the transaction that records what they did, as every other write does: both commit, or neither.

const attemptCount = async (t: TestServer, webhookId: string) =>
  Number((await t.rt.ds.query(`SELECT count(*) AS n FROM webhook_attempts WHERE "webhookId" = '${webhookId}'`))[0].n);

async function setup() {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const world = await startWebhookWorld({ clock });
  const hook = await addWebhook(world.t.rt, world.w.roomId, world.rx.url);
  const base = `/v1/rooms/${world.w.roomId}/webhooks/${hook.id}`;
  const post = (path: string, key: string, body: unknown = {}) =>
    call(world.t, 'POST', `${base}${path}`, { key: world.w.key, body, headers: { 'Idempotency-Key': key } });
  /** One event delivered by the worker (the receiver answers `status`): its history row. */
  const delivered = async (status: number) => {
    world.rx.script.push({ status });
    const r = await call(world.t, 'POST', `/v1/rooms/${world.w.roomId}/records`, {
      key: world.w.key,
      body: { title: 'R' },
    });
    expect(r.status).toBe(201);
    await world.worker.runOnce();
    return (await deliveryRows(world.t.rt, hook.id)).at(-1);
  };
  return { ...world, clock, hook, post, delivered };
}

/** The retry after the fault does the write once; the same key then replays that answer. */
async function retriedOnce(send: () => Promise<{ status: number; body: any; headers: Headers }>, status: number) {
  const retried = await send();
  expect(retried.status).toBe(status);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
  const replayed = await send();
  expect(replayed.status).toBe(status);
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body).toEqual(retried.body);
  return retried.body;
}

describe('webhook writes and their Idempotency-Key commit together', () => {
  it('test: a failure while storing the answer leaves the attempt unrecorded; the retry records one', async () => {
    await using s = await setup();
    const heal = await failKeyCompletion(s.t.rt.ds);
    const failed = await s.post('/test', 'test-1');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await attemptCount(s.t, s.hook.id)).toBe(0);
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'pending', attempts: 0, leaseOwner: null });

    await heal();
    const body = await retriedOnce(() => s.post('/test', 'test-1'), 200);
    expect(body.outcome.success).toBe(true);
    expect(await attemptCount(s.t, s.hook.id)).toBe(1);
  });

  it('redeliver: a failure while storing the answer leaves the attempt unrecorded; the retry records one', async () => {
    await using s = await setup();
    const original = await s.delivered(200);
    expect(await attemptCount(s.t, s.hook.id)).toBe(1);
    const heal = await failKeyCompletion(s.t.rt.ds);
    const path = `/deliveries/${original.id}/redeliver`;
    const failed = await s.post(path, 'redeliver-1');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await attemptCount(s.t, s.hook.id)).toBe(1);

    await heal();
    const body = await retriedOnce(() => s.post(path, 'redeliver-1'), 200);
    expect(body.delivery).toMatchObject({ eventId: original.eventId, success: true, attempts: 1 });
    expect(body.delivery.id).not.toBe(original.id);
    expect(await attemptCount(s.t, s.hook.id)).toBe(2);
  });

  it('recover: a failure while storing the answer queues nothing; the retry queues once', async () => {
    await using s = await setup();
    const since = s.clock.now().toISOString();
    // 400 finalizes at once (no retry)
    expect(await s.delivered(400)).toMatchObject({ state: 'failed' });
    s.clock.advance(60_000);
    const heal = await failKeyCompletion(s.t.rt.ds);
    const failed = await s.post('/recover', 'recover-1', { since });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await deliveryRows(s.t.rt, s.hook.id)).toHaveLength(1);

    await heal();
    expect(await retriedOnce(() => s.post('/recover', 'recover-1', { since }), 202)).toEqual({ queued: 1 });
    const rows = await deliveryRows(s.t.rt, s.hook.id);
    expect(rows.map((r) => r.state)).toEqual(['failed', 'pending']);
  });
});
