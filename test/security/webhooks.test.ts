import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from '../../db/entities/index.js';
import { configureWebhookDelivery } from '../../src/webhooks/deliveryDeps.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import type { HttpSender } from '../../src/webhooks/httpSender.js';
import type { Resolver } from '../../src/outbound/ssrfGuard.js';
import { encryptSecret, loadWebhookKey } from '../../src/webhooks/secretBox.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { captureLogs, DevBrowser, startDeveloperEnv } from '../web/developerHelpers.js';
import { deliveryRows, startReceiver } from '../webhooks/helpers.js';

// Webhooks as an attack surface: SSRF through receiver URLs, forged delivery headers (a custom
// header named like a signed one), and forged or replayed deliveries at the receiver. test/webhooks/ has the full
// matrix.

const PUBLIC = '93.184.216.34';
const dns: Record<string, string[]> = {
  'public.example': [PUBLIC],
  'intranet.example': ['10.1.2.3'],
  'mixed.example': [PUBLIC, '169.254.169.254'],
};
const resolver: Resolver = async (host) =>
  (dns[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/** Representative spellings of internal targets: decimal, octal, hex, short forms, IPv6 forms, names. */
const SSRF_URLS = [
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0177.0.0.1/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://0/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[64:ff9b::a00:1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://localhost/',
  'http://app.localhost./',
  'https://intranet.example/',
  'https://mixed.example/',
  'file:///etc/passwd',
  'http://user:pw@public.example/',
  'gopher://public.example/',
];

/** Headers a sender signing `body` at `timestamp` with `secret` would send. */
const signPayload = (secret: string, timestamp: number, body: Buffer) => ({
  'svc-webhook-timestamp': String(timestamp),
  'svc-webhook-signature': `v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`,
});

describe('security: webhooks', () => {
  // registration is a domain call: one runtime for the list, a world per URL
  let ssrf: TestServer;
  beforeAll(async () => {
    ssrf = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    configureWebhookDelivery(ssrf.rt.services, { resolver });
  });
  afterAll(async () => {
    await ssrf?.close();
  });
  it.each(SSRF_URLS)('SSRF at registration: %s is refused with a validation_error', async (url) => {
    const t = ssrf;
    const w = await createWorld(t.rt);
    const err = await createWebhook(t.rt.services, { roomId: w.roomId, url }).catch((e) => e);
    expect(err).toMatchObject({ code: 'validation_error', details: { field: 'url' } });
  });

  it('SSRF by DNS rebinding: a name that resolved publicly at registration and internally at delivery is never contacted', async () => {
    await using t = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    let answer = PUBLIC;
    const sent: string[] = [];
    const sender: HttpSender = async (req) => {
      sent.push(req.target.address);
      return { statusCode: 200, body: '', error: null, durationMs: 1 };
    };
    configureWebhookDelivery(t.rt.services, { resolver: async () => [{ address: answer, family: 4 }], sender });
    const w = await createWorld(t.rt);
    const { webhook } = await createWebhook(t.rt.services, { roomId: w.roomId, url: 'https://rebind.example/hook' });
    answer = '127.0.0.1';
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hi' } });
    await createWebhookWorker({ services: t.rt.services }).runOnce();
    expect(sent).toEqual([]);
    expect((await deliveryRows(t.rt, webhook.id))[0]).toMatchObject({ lastError: 'ssrf_refused', statusCode: null });
  });

  it.each([
    'Svc-Webhook-Signature',
    'svc-webhook-id',
    'Svc-Webhook-Timestamp',
    'X-Webhook-Signature',
    'x-webhook-event',
    'Sunset',
    'Deprecation',
    'Host',
    'Content-Length',
    'Transfer-Encoding',
    'Connection',
    'Proxy-Authorization',
  ])('header forging: a custom header named %s is refused at registration', async (name) => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const err = await createWebhook(t.rt.services, {
      roomId: w.roomId,
      url: 'http://127.0.0.1:9/hook',
      headers: [[name, 'forged']],
    }).catch((e) => e);
    expect(err).toMatchObject({ code: 'validation_error', details: { header: name } });
  });

  it('header injection: a custom header value with CR/LF or a name that is not a token is refused', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const header of [
      ['X-Ok', 'a\r\nSvc-Webhook-Signature: v1=forged'],
      ['X-Ok', 'a\nb'],
      ['X Bad', 'v'],
      ['X-Bad:', 'v'],
    ] as [string, string][]) {
      await expect(
        createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/hook', headers: [header] }),
      ).rejects.toMatchObject({ code: 'validation_error' });
    }
  });

  it.each([
    'Svc_Webhook_Signature',
    'SVC_WEBHOOK_ID',
    'svc_webhook-timestamp',
    'Svc-Webhook',
    'X_Webhook_Event',
    'x_webhook_signature',
    'X-WEBHOOK',
    'X_Webhook_Delivery_Id',
    'Transfer_Encoding',
    'CONTENT_LENGTH',
    'Proxy_Authorization',
    'proxy_connection',
    'Keep_Alive',
    'Http2-Settings',
  ])(
    'header forging through spelling (underscores for dashes, case): a custom header named %s is refused at registration, nothing stored',
    async (name) => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      const err = await createWebhook(t.rt.services, {
        roomId: w.roomId,
        url: 'http://127.0.0.1:9/hook',
        headers: [[name, 'forged']],
      }).catch((e) => e);
      expect(err).toMatchObject({
        code: 'validation_error',
        status: 400,
        details: { field: 'headers', header: name, reason: 'protected_header' },
      });
      expect(await t.rt.ds.getRepository(Webhook).count()).toBe(0);
    },
  );

  it('silent delivery failure: custom header values no HTTP request can carry (non-Latin-1, control characters) are refused at registration, on the page with 400 and nothing stored', async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page();
    const unsendable: [string, string][] = [
      ['X-Team', 'caf\u00e9 \u20ac'],
      ['Authorization', 'Bearer \ud83d\ude00'],
      ['X-A', 'a\u2028b'],
      ['X-A', 'a\u0000b'],
      ['X-A', 'a\u007fb'],
      ['X-A', 'a\u0001b'],
    ];
    for (const header of unsendable) {
      const err = await createWebhook(env.t.rt.services, {
        roomId: env.w.roomId,
        url: 'http://127.0.0.1:9/hook',
        headers: [header],
      }).catch((e) => e);
      expect(err, JSON.stringify(header)).toMatchObject({
        code: 'validation_error',
        status: 400,
        details: { field: 'headers', header: header[0] },
      });
      const r = await b.submit('/settings/developer/webhooks', {
        room: env.w.roomId,
        url: 'http://127.0.0.1:9/hook',
        headers: `${header[0]}: ${header[1]}`,
      });
      expect(r.status, JSON.stringify(header)).toBe(400);
      expect(r.html).toContain(`Invalid value for header ${header[0]}`);
    }
    // the same name twice, once spelled with an underscore
    const twice = await createWebhook(env.t.rt.services, {
      roomId: env.w.roomId,
      url: 'http://127.0.0.1:9/hook',
      headers: [
        ['X-Team', 'a'],
        ['x_team', 'b'],
      ],
    }).catch((e) => e);
    expect(twice).toMatchObject({ code: 'validation_error', details: { header: 'x_team' } });
    expect(await env.t.rt.ds.getRepository(Webhook).count()).toBe(0);
    // Latin-1 is what HTTP carries: accepted
    await createWebhook(env.t.rt.services, {
      roomId: env.w.roomId,
      url: 'http://127.0.0.1:9/hook',
      headers: [['X-Team', 'caf\u00e9']],
    });
  });

  it('silent delivery failure: a stored custom header value no request can carry (a row from before the check) fails the delivery at once as invalid_custom_header, logged, never sent', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    const logs = captureLogs(t);
    const w = await createWorld(t.rt);
    const { webhook } = await createWebhook(t.rt.services, {
      roomId: w.roomId,
      url: rx.url,
      headers: [['X-Team', 'blue']],
    });
    const key = loadWebhookKey(t.rt.services.config);
    await t.rt.ds
      .getRepository(Webhook)
      .update(
        { id: webhook.id },
        { headersEnc: encryptSecret(key, JSON.stringify([['X-Team', 'caf\u20ac-receiver-credential']])) },
      );
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hi' } });
    await createWebhookWorker({ services: t.rt.services }).runOnce();
    expect(rx.requests).toHaveLength(0);
    expect((await deliveryRows(t.rt, webhook.id))[0]).toMatchObject({
      state: 'failed',
      lastError: 'invalid_custom_header',
      attempts: 1,
      statusCode: null,
    });
    expect(logs.text()).toContain('webhook custom header cannot be sent');
    expect(logs.text()).toContain(webhook.id);
    expect(logs.text()).not.toContain('receiver-credential');
  });

  it('SSRF oracle: a caller who may not manage the room is refused (404, 403) before the receiver URL is resolved: no DNS lookup', async () => {
    await using env = await startDeveloperEnv();
    const lookups: string[] = [];
    configureWebhookDelivery(env.t.rt.services, { resolver: async (host) => (lookups.push(host), resolver(host)) });
    const other = await createWorld(env.t.rt, 'Victim');
    const url = 'https://intranet.example/hook';
    // another organization's room: 404 on the page, as for a room that does not exist
    const attacker = await DevBrowser.signedIn(env.t, env.w.owner);
    await attacker.page();
    const foreign = await attacker.submit('/settings/developer/webhooks', { room: other.roomId, url });
    expect(foreign.status).toBe(404);
    expect(foreign.html).toContain('Room not found');
    // a member of the room without manage rights: 403
    const member = await DevBrowser.signedIn(env.t, env.w.member);
    await member.page();
    const notManager = await member.submit('/settings/developer/webhooks', { room: env.w.roomId, url });
    expect(notManager.status).toBe(403);
    expect(lookups).toEqual([]);
    expect(await env.t.rt.ds.getRepository(Webhook).count()).toBe(0);
    // the room's manager: the name is resolved, and refused
    const owner = await attacker.submit('/settings/developer/webhooks', { room: env.w.roomId, url });
    expect(owner.status).toBe(400);
    expect(lookups).toEqual(['intranet.example']);
  });

  it('internal address disclosure: refusing an internal receiver says so without naming the address a host resolved to (message, details, page)', async () => {
    await using env = await startDeveloperEnv();
    configureWebhookDelivery(env.t.rt.services, { resolver });
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page();
    for (const [url, address] of [
      ['https://intranet.example/hook', '10.1.2.3'],
      ['https://mixed.example/', '169.254.169.254'],
    ]) {
      const err = await createWebhook(env.t.rt.services, { roomId: env.w.roomId, url }).catch((e) => e);
      expect(err).toMatchObject({ code: 'validation_error', details: { field: 'url', reason: 'blocked_address' } });
      expect(err.message).toContain('internal or special address');
      expect(JSON.stringify({ message: err.message, details: err.details })).not.toContain(address);
      const r = await b.submit('/settings/developer/webhooks', { room: env.w.roomId, url });
      expect(r.status).toBe(400);
      expect(r.html).toContain('resolves to an internal or special address');
      expect(r.html).not.toContain(address);
    }
  });

  it('forged or replayed deliveries are rejected by verifyWebhook: wrong secret, altered body, stale timestamp', () => {
    const secret = 'whsec_test-secret';
    const body = Buffer.from('{"id":"evt_1"}');
    const now = Math.floor(Date.now() / 1000);
    const good = signPayload(secret, now, body);
    expect(verifyWebhook({ rawBody: body, headers: good, secrets: [secret] }).ok).toBe(true);
    expect(verifyWebhook({ rawBody: body, headers: signPayload('whsec_other', now, body), secrets: [secret] }).ok).toBe(
      false,
    );
    expect(verifyWebhook({ rawBody: Buffer.from('{"id":"evt_2"}'), headers: good, secrets: [secret] }).ok).toBe(false);
    expect(verifyWebhook({ rawBody: body, headers: signPayload(secret, now - 301, body), secrets: [secret] }).ok).toBe(
      false,
    );
    expect(
      verifyWebhook({ rawBody: body, headers: { ...good, 'svc-webhook-signature': 'v1=' }, secrets: [secret] }).ok,
    ).toBe(false);
  });
});
