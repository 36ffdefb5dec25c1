import { describe, expect, it } from 'vitest';
import { Webhook } from '../../db/entities/index.js';
import { createWebhookWorker, verifyWebhook } from '../../src/webhooks/index.js';
import { call } from '../helpers/harness.js';
import { startReceiver, type Captured } from '../webhooks/helpers.js';
import { captureLogs, DevBrowser, secretShown, startDeveloperEnv } from './developerHelpers.js';

async function setup() {
  const env = await startDeveloperEnv();
  const rx = await startReceiver();
  const logs = captureLogs(env.t);
  const b = await DevBrowser.signedIn(env.t, env.w.owner);
  await b.page('/settings/developer/webhooks');
  const worker = createWebhookWorker({ services: env.t.rt.services });
  const postMessage = () =>
    call(env.t, 'POST', `/v1/rooms/${env.w.roomId}/messages`, { key: env.w.key, body: { body: 'hello' } });
  const verify = (req: Captured, secrets: string[]) =>
    verifyWebhook({ rawBody: req.body, headers: req.headers, secrets, now: env.clock.now }).ok;
  const close = async () => {
    await worker.stop();
    await rx.close();
    await env.t.close();
  };
  return { ...env, rx, logs, b, worker, postMessage, verify, [Symbol.asyncDispose]: close };
}

/** A webhook's own page. */
const hookPage = (id: string) => `/settings/developer/webhooks/${id}`;

/** The card of one webhook on its page. */
const card = (html: string, id: string) =>
  new RegExp(`<article class="card" id="webhook-${id}"[\\s\\S]*?</article>`).exec(html)?.[0] ?? '';

describe('/settings/developer: webhooks', () => {
  it('labels the webhook form as the contract says and offers only rooms the user administers', async () => {
    await using s = await setup();
    const { html } = await s.b.page('/settings/developer/webhooks');
    expect(html).toMatch(
      /<label for="webhook-room">Room<\/label>\s*<select id="webhook-room" name="room" required><optgroup label="Acme"><option value="room_[^"]+" selected>General<\/option><\/optgroup><\/select>/,
    );
    expect(html).toMatch(/<label for="webhook-url">URL<\/label>\s*<input id="webhook-url" name="url" type="url"/);
    expect(html).toMatch(
      /<label for="webhook-api-version">API version<\/label>\s*<select id="webhook-api-version" name="apiVersion"[^>]*><option value="2026-06-09" selected>2026-06-09 \(v2, recommended\)<\/option><option value="2025-10-23">/,
    );
    expect(html).toMatch(
      /<label for="webhook-headers">Custom headers<\/label>\s*<textarea id="webhook-headers" name="headers"/,
    );
    expect(html).toContain('<button type="submit" class="primary">Create webhook</button>');
    expect(html).not.toContain(s.w.dmRoomId);
    // a plain member of the room administers nothing
    const member = await DevBrowser.signedIn(s.t, s.w.member);
    const theirs = (await member.page('/settings/developer/webhooks')).html;
    expect(theirs).toContain('You do not administer any room');
    expect(theirs).not.toContain('name="room"');
  });

  it('creates a webhook, shows its secret once, delivers signed events, keeps a history and redelivers', async () => {
    await using s = await setup();
    const created = await s.b.submit('/settings/developer/webhooks', {
      room: s.w.roomId,
      url: s.rx.url,
      apiVersion: '2026-06-09',
      headers: 'Authorization: Bearer receiver-credential\r\nX-Team: blue',
    });
    expect(created.status).toBe(200);
    const secret = secretShown(created.html)!;
    expect(secret).toBeTruthy();
    expect(created.html.split(secret)).toHaveLength(2);
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    expect(hook.headerNames).toEqual(['Authorization', 'X-Team']);

    let page = (await s.b.page(hookPage(hook.id))).html;
    expect(page).not.toContain(secret);
    expect(page).not.toContain('receiver-credential');
    expect(page).not.toContain('blue');
    const c = card(page, hook.id);
    expect(c).toContain(`<code>${s.rx.url}</code>`);
    expect(c).toContain('API version <code>2026-06-09</code>');
    expect(c).toContain('<code>Authorization</code>, <code>X-Team</code>');
    expect(c).toContain('No deliveries yet.');

    expect((await s.postMessage()).status).toBe(201);
    expect(await s.worker.runOnce()).toBe(1);
    expect(s.rx.requests).toHaveLength(1);
    expect(s.verify(s.rx.requests[0], [secret])).toBe(true);
    expect(s.rx.requests[0].headers.authorization).toBe('Bearer receiver-credential');

    page = (await s.b.page(hookPage(hook.id))).html;
    const history = card(page, hook.id);
    expect(history).toMatch(
      /<td><code>message\.created<\/code><\/td>\s*<td>200<\/td>\s*<td><span class="badge ok">Yes<\/span><\/td>\s*<td>\d+ ms<\/td>\s*<td><time datetime="2026-06-10T12:00:00\.000Z">/,
    );
    const deliveryId = /name="delivery" value="(whd_[^"]+)"/.exec(history)![1];

    s.rx.script.push({ status: 500 });
    const failed = await s.b.submit('/settings/developer/webhooks/redeliver', {
      room: s.w.roomId,
      webhook: hook.id,
      delivery: deliveryId,
    });
    expect(failed.status).toBe(303);
    expect(failed.location).toBe(`/settings/developer/webhooks/${hook.id}?notice=redelivery-failed`);
    const ok = await s.b.submit('/settings/developer/webhooks/redeliver', {
      room: s.w.roomId,
      webhook: hook.id,
      delivery: deliveryId,
    });
    expect(ok.location).toBe(`/settings/developer/webhooks/${hook.id}?notice=redelivered`);
    expect(s.rx.requests).toHaveLength(3);
    expect(new Set(s.rx.requests.map((r) => r.headers['svc-webhook-id'])).size).toBe(1);
    page = (await s.b.page(ok.location!)).html;
    expect(page).toContain('Redelivered: the receiver accepted the event.');
    expect(card(page, hook.id).match(/\(redelivery\)/g)).toHaveLength(2);
    expect(card(page, hook.id)).toMatch(/<td>500<\/td>\s*<td><span class="badge off">No<\/span>/);

    const logs = s.logs.text();
    expect(logs).toContain('webhook created in developer settings');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain('receiver-credential');
  });

  it('refuses internal URLs and forbidden headers with a clear message', async () => {
    await using s = await setup();
    const cases: [Record<string, string>, string][] = [
      [
        { url: 'http://10.0.0.7/hook' },
        'This URL cannot receive webhooks: URL points to an internal or special address; an operator may allow it',
      ],
      [
        { url: 'http://169.254.169.254/latest' },
        'This URL cannot receive webhooks: URL points to an internal or special address; an operator may allow it',
      ],
      [{ url: 'ftp://example.com/x' }, 'This URL cannot receive webhooks: URL must use http or https.'],
      [
        { url: 'http://u:p@example.com/x' },
        'This URL cannot receive webhooks: URL must not carry credentials; use a custom header.',
      ],
      [
        { url: s.rx.url, headers: 'Svc-Webhook-Signature: v1=00' },
        'Custom header Svc-Webhook-Signature is not allowed',
      ],
      [{ url: s.rx.url, headers: 'no colon here' }, 'Header must be &quot;Name: value&quot;'],
      [{ url: s.rx.url, apiVersion: '2024-01-01' }, 'apiVersion must be one of 2026-06-09, 2025-10-23.'],
    ];
    for (const [fields, text] of cases) {
      const r = await s.b.submit('/settings/developer/webhooks', { room: s.w.roomId, ...fields });
      expect(r.status, text).toBe(400);
      expect(r.html).toContain('<p class="error" role="alert">');
      expect(r.html).toContain(text);
      expect(secretShown(r.html)).toBeNull();
      expect(r.html).toContain(`value="${fields.url.replace(/&/g, '&amp;')}"`);
    }
    expect(await s.t.rt.ds.getRepository(Webhook).count()).toBe(0);
  });

  it('rotates: the next secret shown once, both secrets sign, completing makes the next one the only one', async () => {
    await using s = await setup();
    const old = secretShown(
      (await s.b.submit('/settings/developer/webhooks', { room: s.w.roomId, url: s.rx.url })).html,
    )!;
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    await s.b.page(hookPage(hook.id));
    for (const bad of ['0', '91', 'abc', '7.5', '']) {
      const r = await s.b.submit('/settings/developer/webhooks/rotate', {
        room: s.w.roomId,
        webhook: hook.id,
        periodDays: bad,
        confirm: 'yes',
      });
      expect(r.status).toBe(400);
      expect(r.html).toContain('The rotation period is 1 to 90 whole days.');
    }
    // the button leads to a confirmation step (also what a POST without the confirmation answers)
    const ask = await s.b.page(`/settings/developer/webhooks/rotate?webhook=${hook.id}&periodDays=3`);
    expect(ask.html).toContain('Start rotation?');
    expect(ask.html).toContain('<input type="hidden" name="periodDays" value="3">');
    const unconfirmed = await s.b.submit('/settings/developer/webhooks/rotate', {
      room: s.w.roomId,
      webhook: hook.id,
      periodDays: '3',
    });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.html).toContain('Start rotation?');
    expect(secretShown(unconfirmed.html)).toBeNull();
    expect((await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: hook.id })).nextSecretEnc).toBeNull();
    const started = await s.b.submit('/settings/developer/webhooks/rotate', {
      room: s.w.roomId,
      webhook: hook.id,
      periodDays: '3',
      confirm: 'yes',
    });
    expect(started.status).toBe(200);
    const next = secretShown(started.html)!;
    expect(next).toBeTruthy();
    expect(next).not.toBe(old);
    expect(started.html).toContain('until 2026-06-13 12:00 UTC');

    let page = (await s.b.page(hookPage(hook.id))).html;
    expect(page).not.toContain(next);
    expect(card(page, hook.id)).toContain('Rotating: deliveries are signed with the current and the next secret until');
    expect(card(page, hook.id)).toContain('>Complete rotation</button>');
    const again = await s.b.submit('/settings/developer/webhooks/rotate', {
      room: s.w.roomId,
      webhook: hook.id,
      periodDays: '7',
      confirm: 'yes',
    });
    expect(again.status).toBe(409);
    expect(again.html).toContain('A rotation is already in progress; complete it first.');

    await s.postMessage();
    await s.worker.runOnce();
    expect(s.verify(s.rx.requests[0], [old])).toBe(true);
    expect(s.verify(s.rx.requests[0], [next])).toBe(true);

    const askDone = await s.b.submit('/settings/developer/webhooks/complete-rotation', {
      room: s.w.roomId,
      webhook: hook.id,
    });
    expect(askDone.status).toBe(200);
    expect(askDone.html).toContain('Complete rotation?');
    const done = await s.b.submit('/settings/developer/webhooks/complete-rotation', {
      room: s.w.roomId,
      webhook: hook.id,
      confirm: 'yes',
    });
    expect(done.location).toBe(`/settings/developer/webhooks/${hook.id}?notice=rotation-completed`);
    await s.postMessage();
    await s.worker.runOnce();
    expect(s.verify(s.rx.requests[1], [next])).toBe(true);
    expect(s.verify(s.rx.requests[1], [old])).toBe(false);
    page = (await s.b.page(done.location!)).html;
    expect(page).toContain('Rotation completed');
    expect(card(page, hook.id)).toContain('>Start rotation</button>');
    expect(s.logs.text()).not.toContain(next);
    expect(s.logs.text()).not.toContain(old);
  });

  it('deactivates, activates and deletes (after a confirmation step)', async () => {
    await using s = await setup();
    await s.b.submit('/settings/developer/webhooks', { room: s.w.roomId, url: s.rx.url });
    const hook = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: s.w.roomId });
    await s.b.page(hookPage(hook.id));
    const off = await s.b.submit('/settings/developer/webhooks/deactivate', { room: s.w.roomId, webhook: hook.id });
    expect(off.location).toBe(`/settings/developer/webhooks/${hook.id}?notice=webhook-deactivated`);
    let page = (await s.b.page(off.location!)).html;
    expect(card(page, hook.id)).toContain('<span class="badge off">Inactive</span>');
    expect(card(page, hook.id)).toContain('>Activate</button>');
    await s.postMessage();
    expect(await s.worker.runOnce()).toBe(0);

    const on = await s.b.submit('/settings/developer/webhooks/activate', { room: s.w.roomId, webhook: hook.id });
    expect(on.location).toBe(`/settings/developer/webhooks/${hook.id}?notice=webhook-activated`);
    page = (await s.b.page(hookPage(hook.id))).html;
    expect(card(page, hook.id)).toContain('<span class="badge ok">Active</span>');

    const confirm = await s.b.page(`/settings/developer/webhooks/delete?webhook=${hook.id}`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Delete webhook?');
    expect(confirm.html).toContain(`<code>${s.rx.url}</code>`);
    const unconfirmed = await s.b.submit('/settings/developer/webhooks/delete', { room: s.w.roomId, webhook: hook.id });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.html).toContain('Delete webhook?');
    expect(await s.t.rt.ds.getRepository(Webhook).countBy({ id: hook.id })).toBe(1);
    const gone = await s.b.submit('/settings/developer/webhooks/delete', { webhook: hook.id, confirm: 'yes' });
    expect(gone.location).toBe('/settings/developer/webhooks?notice=webhook-deleted#webhooks');
    expect(await s.t.rt.ds.getRepository(Webhook).countBy({ id: hook.id })).toBe(0);
    expect((await s.b.page(gone.location!)).html).toContain('The webhook was deleted');
  });
});
