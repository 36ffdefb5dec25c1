import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configureWebhookDelivery } from '../../src/webhooks/deliveryDeps.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import type { HttpSender } from '../../src/webhooks/httpSender.js';
import type { Resolver } from '../../src/webhooks/ssrfGuard.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { deliveryRows } from '../webhooks/helpers.js';

// Webhooks as an attack surface: SSRF through receiver URLs (spec 6.6), forged delivery headers (spec 6.3
// rule 5), and forged or replayed deliveries at the receiver (spec 6.4). test/webhooks/ has the full matrix.

const PUBLIC = '93.184.216.34';
const dns: Record<string, string[]> = { 'public.example': [PUBLIC], 'intranet.example': ['10.1.2.3'], 'mixed.example': [PUBLIC, '169.254.169.254'] };
const resolver: Resolver = async (host) => (dns[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/** Representative spellings of internal targets: decimal, octal, hex, short forms, IPv6 forms, names. */
const SSRF_URLS = [
  'http://127.0.0.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f000001/', 'http://127.1/', 'http://0/',
  'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[64:ff9b::a00:1]/', 'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/', 'http://[fd00::1]/', 'http://localhost/', 'http://app.localhost./', 'https://intranet.example/',
  'https://mixed.example/', 'file:///etc/passwd', 'http://user:pw@public.example/', 'gopher://public.example/',
];

/** Headers a sender signing `body` at `timestamp` with `secret` would send (spec 6.4). */
const signPayload = (secret: string, timestamp: number, body: Buffer) => ({
  'svc-webhook-timestamp': String(timestamp),
  'svc-webhook-signature': `v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`,
});

describe('security: webhooks', () => {
  it.each(SSRF_URLS)('SSRF at registration: %s is refused with a validation_error', async (url) => {
    await using t = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    configureWebhookDelivery(t.rt.services, { resolver });
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
    expect((await deliveryRows(t.rt, webhook.id))[0]).toMatchObject({ lastError: 'ssrf_blocked', statusCode: null });
  });

  it.each([
    'Svc-Webhook-Signature', 'svc-webhook-id', 'Svc-Webhook-Timestamp', 'X-Webhook-Signature', 'x-webhook-event', 'Sunset', 'Deprecation',
    'Host', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Proxy-Authorization',
  ])('header forging: a custom header named %s is refused at registration', async (name) => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const err = await createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/hook', headers: [[name, 'forged']] }).catch((e) => e);
    expect(err).toMatchObject({ code: 'validation_error', details: { header: name } });
  });

  it('header injection: a custom header value with CR/LF or a name that is not a token is refused', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const header of [['X-Ok', 'a\r\nSvc-Webhook-Signature: v1=forged'], ['X-Ok', 'a\nb'], ['X Bad', 'v'], ['X-Bad:', 'v']] as [string, string][]) {
      await expect(createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/hook', headers: [header] })).rejects.toMatchObject({ code: 'validation_error' });
    }
  });

  it('forged or replayed deliveries are rejected by verifyWebhook: wrong secret, altered body, stale timestamp', () => {
    const secret = 'whsec_test-secret';
    const body = Buffer.from('{"id":"evt_1"}');
    const now = Math.floor(Date.now() / 1000);
    const good = signPayload(secret, now, body);
    expect(verifyWebhook({ rawBody: body, headers: good, secrets: [secret] }).ok).toBe(true);
    expect(verifyWebhook({ rawBody: body, headers: signPayload('whsec_other', now, body), secrets: [secret] }).ok).toBe(false);
    expect(verifyWebhook({ rawBody: Buffer.from('{"id":"evt_2"}'), headers: good, secrets: [secret] }).ok).toBe(false);
    expect(verifyWebhook({ rawBody: body, headers: signPayload(secret, now - 301, body), secrets: [secret] }).ok).toBe(false);
    expect(verifyWebhook({ rawBody: body, headers: { ...good, 'svc-webhook-signature': 'v1=' }, secrets: [secret] }).ok).toBe(false);
  });
});
