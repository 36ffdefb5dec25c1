import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { configureWebhookDelivery } from '../../src/webhooks/deliveryDeps.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import type { HttpSender } from '../../src/webhooks/httpSender.js';
import { checkOutboundUrl, parseAllowlist, type Resolver, UrlRefusedError } from '../../src/outbound/ssrfGuard.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { Webhook } from '../../db/entities/index.js';
import { deliveryRows, startReceiver } from './helpers.js';

const PUBLIC = '93.184.216.34';
const DNS: Record<string, string[]> = {
  'public.example': [PUBLIC],
  'internal.example': ['10.1.2.3'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': [PUBLIC, '127.0.0.1'],
  'v6internal.example': ['fd00::5'],
  'receiver.test': ['127.0.0.1'],
};
const resolver: Resolver = async (host) =>
  (DNS[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/** Every spelling of an internal target from the issue, and then some. */
const REFUSED = [
  'http://2130706433/',
  'http://0177.0.0.1/',
  'http://0x7f000001/',
  'http://0x7f.0.0.1/',
  'http://127.1/',
  'http://127.0.0.1:8080/x',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::10.0.0.1]/',
  'http://[::]/',
  'http://0.0.0.0/',
  'http://0/',
  'http://[::1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fe80::1]/',
  'http://100.64.0.1/',
  'http://100.127.255.254/',
  'http://224.0.0.1/',
  'http://239.255.255.250/',
  'http://[ff02::1]/',
  'http://255.255.255.255/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://192.0.2.1/',
  'http://240.0.0.1/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://app.localhost/',
  'http://localhost.localdomain/',
  'https://internal.example/hook',
  'https://metadata.example/',
  'https://mixed.example/',
  'https://v6internal.example/',
];

const noAllowlist = { allowlist: parseAllowlist([]), resolver };

describe('SSRF guard', () => {
  it.each(REFUSED)('refuses %s', async (url) => {
    const err = await checkOutboundUrl(url, noAllowlist).catch((e) => e);
    expect(err).toBeInstanceOf(UrlRefusedError);
    expect(['blocked_address', 'blocked_host']).toContain(err.reason);
  });

  it.each([
    'ftp://public.example/',
    'file:///etc/passwd',
    'gopher://public.example/',
    'javascript:alert(1)',
    'not a url',
    'http://user:pw@public.example/',
  ])('refuses the non-http URL or URL with credentials %s', async (url) => {
    await expect(checkOutboundUrl(url, noAllowlist)).rejects.toBeInstanceOf(UrlRefusedError);
  });

  it('accepts public addresses and pins the address it checked', async () => {
    expect(await checkOutboundUrl(`http://${PUBLIC}/`, noAllowlist)).toMatchObject({ address: PUBLIC, family: 4 });
    expect(await checkOutboundUrl('http://[2606:4700::1111]/', noAllowlist)).toMatchObject({
      address: '2606:4700::1111',
      family: 6,
    });
    expect(await checkOutboundUrl('https://public.example/hook', noAllowlist)).toMatchObject({
      hostname: 'public.example',
      address: PUBLIC,
    });
    expect(await checkOutboundUrl('http://[::ffff:93.184.216.34]/', noAllowlist)).toMatchObject({ family: 6 });
  });

  it('lets the operator allow-list CIDRs and host names', async () => {
    const allow = {
      allowlist: parseAllowlist(['10.0.0.0/8', 'internal.example', '*.corp.example', '127.0.0.1']),
      resolver,
    };
    expect(await checkOutboundUrl('http://10.9.9.9/', allow)).toBeTruthy();
    expect(await checkOutboundUrl('https://internal.example/', allow)).toBeTruthy();
    expect(await checkOutboundUrl('http://127.0.0.1:9/', allow)).toBeTruthy();
    expect(await checkOutboundUrl('http://[::ffff:127.0.0.1]/', allow)).toBeTruthy();
    await expect(checkOutboundUrl('http://192.168.0.1/', allow)).rejects.toThrow(/internal/);
    await expect(checkOutboundUrl('http://localhost/', allow)).rejects.toThrow(/local host name/);
    expect(() => parseAllowlist(['10.0.0.0/99'])).toThrow(/SVC_SSRF_ALLOWLIST/);
  });

  it('refuses every spelling at creation with a clear validation_error (no allow-list)', async () => {
    await using t = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    configureWebhookDelivery(t.rt.services, { resolver });
    const w = await createWorld(t.rt);
    for (const url of REFUSED) {
      const err = await createWebhook(t.rt.services, { roomId: w.roomId, url }).catch((e) => e);
      expect(err, url).toMatchObject({ code: 'validation_error', status: 400, details: { field: 'url' } });
      expect(err.message).toMatch(/internal|local host name/);
    }
    expect(await t.rt.ds.getRepository(Webhook).count()).toBe(0);
    // a name that does not resolve yet is accepted: every delivery checks again
    await expect(
      createWebhook(t.rt.services, { roomId: w.roomId, url: 'https://not-yet.example/' }),
    ).resolves.toBeTruthy();
  });

  it('refuses every spelling again at delivery, before any connection, and finalizes without retrying', async () => {
    await using t = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    const sent: string[] = [];
    const sender: HttpSender = async (r) => {
      sent.push(r.target.address);
      return { statusCode: 200, body: '', error: null, durationMs: 1 };
    };
    configureWebhookDelivery(t.rt.services, { resolver, sender });
    const w = await createWorld(t.rt);
    const { webhook } = await createWebhook(t.rt.services, { roomId: w.roomId, url: 'https://public.example/hook' });
    const worker = createWebhookWorker({ services: t.rt.services });
    for (const url of REFUSED) {
      // a row written before the guard existed, or a name whose DNS answer changed since creation
      await t.rt.ds.getRepository(Webhook).update({ id: webhook.id }, { url });
      await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: url } });
      expect(await worker.runOnce()).toBe(1);
    }
    expect(sent).toEqual([]);
    const rows = await deliveryRows(t.rt, webhook.id);
    expect(rows).toHaveLength(REFUSED.length);
    for (const row of rows)
      expect(row).toMatchObject({ state: 'failed', attempts: 1, lastError: 'ssrf_refused', statusCode: null });
    await t.rt.ds.getRepository(Webhook).update({ id: webhook.id }, { url: 'https://public.example/hook' });
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'fine' } });
    await worker.runOnce();
    expect(sent).toEqual([PUBLIC]);
  });

  it('connects only to the checked address: one resolution per attempt, the socket never asks DNS again', async () => {
    await using t = await startTestServer();
    await using rx = await startReceiver();
    let lookups = 0;
    // a rebinding DNS: first answer allowed (127.0.0.1 is allow-listed here), later answers internal
    const rebinding: Resolver = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    configureWebhookDelivery(t.rt.services, { resolver: rebinding });
    const w = await createWorld(t.rt);
    const { webhook } = await createWebhook(t.rt.services, {
      roomId: w.roomId,
      url: `http://receiver.test:${rx.port}/hook`,
    });
    lookups = 0;
    const worker = createWebhookWorker({ services: t.rt.services });
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hi' } });
    await worker.runOnce();
    // receiver.test is unknown to the system resolver: the request could only arrive through the pinned address
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0].headers.host).toBe(`receiver.test:${rx.port}`);
    expect(lookups).toBe(1);
    // the next attempt resolves again, gets the internal answer, and is refused
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'again' } });
    await worker.runOnce();
    expect(rx.requests).toHaveLength(1);
    const rows = await deliveryRows(t.rt, webhook.id);
    expect(rows.map((r) => r.lastError)).toEqual([null, 'ssrf_refused']);
  });
});
