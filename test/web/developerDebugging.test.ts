import { describe, expect, it } from 'vitest';
import { setWebhookActive } from '../../src/webhooks/index.js';
import { call } from '../helpers/harness.js';
import { addWebhook, deliveryRows, startReceiver } from '../webhooks/helpers.js';
import { captureLogs, DevBrowser, startDeveloperEnv } from './developerHelpers.js';

// Webhook debugging on /settings/developer over HTTP: the test event action and the delivery page refuse what they
// must (no CSRF token, no room manage access, an inactive webhook, unknown ids) without sending or storing.

async function setup() {
  const env = await startDeveloperEnv();
  const rx = await startReceiver();
  const logs = captureLogs(env.t);
  const hook = await addWebhook(env.t.rt, env.w.roomId, rx.url, {
    headers: [['Authorization', 'Bearer receiver-credential']],
  });
  const b = await DevBrowser.signedIn(env.t, env.w.owner);
  await b.page(`/settings/developer/webhooks/${hook.id}`);
  const close = async () => {
    await rx.close();
    await env.t.close();
  };
  return { ...env, rx, logs, hook, b, [Symbol.asyncDispose]: close };
}

describe('/settings/developer: test events and delivery detail', () => {
  it('sends a test event from the card and shows the outcome; the delivery page shows its request and attempt', async () => {
    await using s = await setup();
    expect(s.b.last).toContain('>Send test event</button>');
    const r = await s.b.submit('/settings/developer/webhooks/test', { room: s.w.roomId, webhook: s.hook.id });
    expect(r.status).toBe(200);
    expect(r.html).toMatch(
      /<p class="notice" role="status">Test event sent: the receiver answered 200 in \d+ ms\.<\/p>/,
    );
    expect(s.rx.requests).toHaveLength(1);
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(r.html).toContain(`/settings/developer/webhooks/delivery?webhook=${s.hook.id}&amp;delivery=${row.id}`);
    const detail = await s.b.page(`/settings/developer/webhooks/delivery?webhook=${s.hook.id}&delivery=${row.id}`);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain('Svc-Webhook-Test: true');
    expect(detail.html).toContain(`Svc-Webhook-Signature: ${s.rx.requests[0].headers['svc-webhook-signature']}`);
    expect(detail.html).toContain('Authorization: (custom header value hidden)');
    expect(detail.html).not.toContain('receiver-credential');
    expect(s.logs.text()).not.toContain('receiver-credential');
  });

  it('refuses a test without the CSRF token, from a member without manage access, and to an inactive webhook, sending nothing', async () => {
    await using s = await setup();
    const noCsrf = await s.b.submit(
      '/settings/developer/webhooks/test',
      { room: s.w.roomId, webhook: s.hook.id },
      { csrf: null },
    );
    expect(noCsrf.status).toBe(403);
    const member = await DevBrowser.signedIn(s.t, s.w.member);
    await member.page('/settings/developer/webhooks');
    const notManager = await member.submit('/settings/developer/webhooks/test', {
      room: s.w.roomId,
      webhook: s.hook.id,
    });
    expect(notManager.status).toBe(403);
    expect(notManager.html).toContain(
      'Only the room&#39;s creator or an owner or admin of its organization can manage its webhooks.',
    );
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    await s.b.page(`/settings/developer/webhooks/${s.hook.id}`);
    expect(s.b.last).not.toContain('>Send test event</button>');
    const inactive = await s.b.submit('/settings/developer/webhooks/test', { room: s.w.roomId, webhook: s.hook.id });
    expect(inactive.status).toBe(409);
    expect(inactive.html).toContain('The webhook is inactive; activate it before sending a test event.');
    expect(s.rx.requests).toHaveLength(0);
    expect(await deliveryRows(s.t.rt, s.hook.id)).toHaveLength(0);
  });

  it('answers the delivery page with 404 for unknown ids and 403 without manage access', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/messages`, { key: s.w.key, body: { body: 'hi' } });
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(
      (await s.b.page(`/settings/developer/webhooks/delivery?webhook=${s.hook.id}&delivery=whd_nope`)).status,
    ).toBe(404);
    expect((await s.b.page('/settings/developer/webhooks/delivery?webhook=wh_nope&delivery=whd_nope')).status).toBe(
      404,
    );
    expect((await s.b.page('/settings/developer/webhooks/delivery')).status).toBe(404);
    const pending = await s.b.page(`/settings/developer/webhooks/delivery?webhook=${s.hook.id}&delivery=${row.id}`);
    expect(pending.status).toBe(200);
    expect(pending.html).toContain('No attempt yet.');
    const member = await DevBrowser.signedIn(s.t, s.w.member);
    const refused = await member.page(`/settings/developer/webhooks/delivery?webhook=${s.hook.id}&delivery=${row.id}`);
    expect(refused.status).toBe(403);
    expect(refused.html).not.toContain(row.deliveryId);
  });
});
