import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { Webhook } from '../../db/entities/index.js';
import { createWebhookWorker } from '../../src/webhooks/index.js';
import { call } from '../helpers/harness.js';
import { deliveryRows, startReceiver } from '../webhooks/helpers.js';
import { DevBrowser, secretShown, startDeveloperEnv } from './developerHelpers.js';

// /settings/developer: the Standard Webhooks secret, event-type filters, the throttle and `Recover`.

async function setup() {
  const env = await startDeveloperEnv();
  const rx = await startReceiver();
  const b = await DevBrowser.signedIn(env.t, env.w.owner);
  await b.page('/settings/developer/webhooks');
  const worker = createWebhookWorker({ services: env.t.rt.services });
  const close = async () => {
    await worker.stop();
    await rx.close();
    await env.t.close();
  };
  return { ...env, rx, b, worker, [Symbol.asyncDispose]: close };
}

const card = (html: string, id: string) =>
  new RegExp(`<article class="card" id="webhook-${id}"[\\s\\S]*?</article>`).exec(html)?.[0] ?? '';
const standardShown = (html: string) =>
  /<input id="copy-it-now-standard" type="text" readonly value="([^"]*)"/.exec(html)?.[1] ?? null;

describe('/settings/developer: Standard Webhooks secret, filters, throttle, recover', () => {
  it('creates a filtered, throttled webhook and shows the secret in both forms once', async () => {
    await using s = await setup();
    const { html } = await s.b.page('/settings/developer/webhooks');
    expect(html).toMatch(/<legend>Event types<\/legend>/);
    expect(html).toMatch(
      /<div class="check"><input type="checkbox" id="webhook-event-task-created" name="eventTypes" value="task.created"><label for="webhook-event-task-created"><code>task.created<\/code><\/label><\/div>/,
    );
    expect(html).not.toContain('value="room.created"'); // a preview type is never offered
    expect(html).toMatch(/<label for="webhook-max-per-second">Max deliveries per second<\/label>/);

    const created = await s.b.submit('/settings/developer/webhooks', {
      room: s.w.roomId,
      url: s.rx.url,
      apiVersion: '2026-06-09',
      headers: '',
      eventTypes: ['task.created', 'message.created'],
      maxPerSecond: '5',
    });
    expect(created.status).toBe(200);
    const secret = secretShown(created.html)!;
    const std = standardShown(created.html)!;
    expect(std).toBe(`whsec_${Buffer.from(secret).toString('base64')}`);
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    expect(hook).toMatchObject({ eventTypes: ['message.created', 'task.created'], maxDeliveriesPerSecond: 5 });

    const page = (await s.b.page(`/settings/developer/webhooks/${hook.id}`)).html;
    expect(standardShown(page)).toBeNull();
    expect(page).not.toContain(std);
    const c = card(page, hook.id);
    expect(c).toContain('Event types: <code>message.created</code>, <code>task.created</code>');
    expect(c).toContain('max deliveries per second: 5');

    // the secret shown verifies a real delivery with the standard's reference library
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'not delivered' } });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/messages`, { key: s.w.key, body: { body: 'hello' } });
    await s.worker.runOnce();
    expect(s.rx.requests).toHaveLength(1);
    const [req] = s.rx.requests;
    // the receiver's clock is the test clock's, which the library does not take: check the signature at the delivery's
    // time
    const signed = new StandardWebhook(std).sign(
      req.headers['webhook-id'] as string,
      s.clock.now(),
      req.body.toString('utf8'),
    );
    expect(req.headers['webhook-signature']).toBe(signed);
  });

  it('updates the filter and throttle from the card, refusing bad values without changing anything', async () => {
    await using s = await setup();
    await s.b.submit('/settings/developer/webhooks', { room: s.w.roomId, url: s.rx.url, maxPerSecond: '' });
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    expect(hook).toMatchObject({ eventTypes: null, maxDeliveriesPerSecond: null });
    const page = (await s.b.page(`/settings/developer/webhooks/${hook.id}`)).html;
    expect(card(page, hook.id)).toContain('Event types: all');
    expect(card(page, hook.id)).toContain(
      '<button type="submit" class="primary" aria-describedby="webhook-' +
        hook.id +
        '-title">Save event types and throttle</button>',
    );

    const at = { room: s.w.roomId, webhook: hook.id };
    const refusals: [Record<string, string | string[]>, RegExp][] = [
      [{ maxPerSecond: '0' }, /whole number from 1 to 1000/],
      [{ maxPerSecond: '-2' }, /whole number from 1 to 1000/],
      [{ maxPerSecond: '1e9' }, /whole number from 1 to 1000/],
      [{ eventTypes: ['room.created'] }, /preview event type/],
      [{ eventTypes: ['task.exploded'] }, /Unknown event type/],
    ];
    for (const [fields, message] of refusals) {
      const r = await s.b.submit('/settings/developer/webhooks/update', { ...at, ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.html).toMatch(message);
      await s.b.page(`/settings/developer/webhooks/${hook.id}`);
    }
    expect(await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: hook.id })).toMatchObject({
      eventTypes: null,
      maxDeliveriesPerSecond: null,
    });

    const ok = await s.b.submit('/settings/developer/webhooks/update', {
      ...at,
      eventTypes: ['record.created'],
      maxPerSecond: '50',
    });
    expect(ok.status).toBe(200);
    expect(ok.html).toContain(`Saved: ${s.rx.url} receives record.created, at most 50 per second.`);
    expect(await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: hook.id })).toMatchObject({
      eventTypes: ['record.created'],
      maxDeliveriesPerSecond: 50,
    });
    expect(card(ok.html, hook.id)).toMatch(
      /id="webhook-[^"]+-event-record-created" name="eventTypes" value="record.created" checked>/,
    );
  });

  it('Recover queues every delivery that failed since the time given; members and forged forms are refused', async () => {
    await using s = await setup();
    await s.b.submit('/settings/developer/webhooks', { room: s.w.roomId, url: s.rx.url });
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    s.rx.script.push({ status: 400 }, { status: 400 });
    for (const body of ['a', 'b'])
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/messages`, { key: s.w.key, body: { body } });
    await s.worker.runOnce();
    s.clock.advance(60_000);
    const page = (await s.b.page(`/settings/developer/webhooks/${hook.id}`)).html;
    expect(card(page, hook.id)).toMatch(
      /<label for="webhook-[^"]+-since">Failed since \(UTC\)<\/label>\s*<input id="webhook-[^"]+-since" name="since" type="datetime-local" value="2026-06-10T11:01"/,
    );
    const at = { room: s.w.roomId, webhook: hook.id };

    expect(
      (
        await s.b.submit(
          '/settings/developer/webhooks/recover',
          { ...at, since: '2026-06-10T11:59' },
          { csrf: 'forged' },
        )
      ).status,
    ).toBe(403);
    const member = await DevBrowser.signedIn(s.t, s.w.member);
    await member.page('/settings/developer/webhooks');
    expect(
      (await member.submit('/settings/developer/webhooks/recover', { ...at, since: '2026-06-10T11:59' })).status,
    ).toBe(403);
    await s.b.page(`/settings/developer/webhooks/${hook.id}`);
    const future = await s.b.submit('/settings/developer/webhooks/recover', { ...at, since: '2026-06-10T13:00' });
    expect(future.status).toBe(400);
    expect(future.html).toContain('since is in the future.');
    await s.b.page(`/settings/developer/webhooks/${hook.id}`);
    expect((await s.b.submit('/settings/developer/webhooks/recover', { ...at, since: 'soon' })).status).toBe(400);
    expect((await deliveryRows(s.t.rt, hook.id)).filter((r) => r.state === 'pending')).toHaveLength(0);

    await s.b.page(`/settings/developer/webhooks/${hook.id}`);
    const r = await s.b.submit('/settings/developer/webhooks/recover', { ...at, since: '2026-06-10T11:59' });
    expect(r.status).toBe(200);
    expect(r.html).toContain('Recovery started: 2 failed deliveries were queued again');
    await s.b.page(`/settings/developer/webhooks/${hook.id}`);
    const again = await s.b.submit('/settings/developer/webhooks/recover', { ...at, since: '2026-06-10T11:59' });
    expect(again.html).toContain('Nothing to recover');
    expect(await s.worker.runOnce()).toBe(2);
    expect(s.rx.requests.slice(2).map((q) => q.headers['webhook-id'])).toEqual(
      s.rx.requests.slice(0, 2).map((q) => q.headers['webhook-id']),
    );
  });
});
