import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyLegacyWebhookSignature, verifyWebhook } from '../../src/webhooks/verifyWebhook.js';

const secret = 'whsec_test_current';
const next = 'whsec_test_next';
const body = '{"id":"evt_AAAAAAAAAAAAAAAAAAAAAA","type":"record.created"}';
const now = () => new Date('2026-06-10T12:00:00.000Z');
const ts = String(Math.floor(now().getTime() / 1000));
const hex = (key: string, t: string, b: string) => createHmac('sha256', key).update(`${t}.${b}`).digest('hex');
const headers = (o: { ts?: string; sig?: string } = {}) => ({
  'Svc-Webhook-Timestamp': o.ts ?? ts,
  'Svc-Webhook-Signature': o.sig ?? `v1=${hex(secret, o.ts ?? ts, body)}`,
  'Svc-Webhook-Id': 'evt_AAAAAAAAAAAAAAAAAAAAAA',
  'Svc-Webhook-Delivery': '0b6c0c1e-1c1e-4c1e-8c1e-0c1e0c1e0c1e',
});

describe('verifyWebhook', () => {
  it('accepts a good signature, from a Buffer or a string, with Node or Fetch headers', () => {
    expect(verifyWebhook({ rawBody: body, headers: headers(), secrets: [secret], now })).toMatchObject({
      ok: true,
      eventId: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
      timestamp: Number(ts),
    });
    const lower = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook({ rawBody: Buffer.from(body), headers: lower, secrets: [secret], now }).ok).toBe(true);
    expect(verifyWebhook({ rawBody: body, headers: new Headers(headers()), secrets: [secret], now }).ok).toBe(true);
  });

  it('accepts any entry against any secret held (rotation), ignoring malformed entries beside a good one', () => {
    const both = `v1=${hex(secret, ts, body)},v1=${hex(next, ts, body)}`;
    expect(verifyWebhook({ rawBody: body, headers: headers({ sig: both }), secrets: [next], now }).ok).toBe(true);
    expect(verifyWebhook({ rawBody: body, headers: headers({ sig: both }), secrets: ['other', secret], now }).ok).toBe(
      true,
    );
    expect(
      verifyWebhook({
        rawBody: body,
        headers: headers({ sig: `v0=abc, v1=${hex(next, ts, body)}` }),
        secrets: [next],
        now,
      }).ok,
    ).toBe(true);
  });

  it('rejects a tampered body, a wrong secret, or a signature over another timestamp', () => {
    expect(verifyWebhook({ rawBody: `${body} `, headers: headers(), secrets: [secret], now })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(
      verifyWebhook({ rawBody: body.replace('created', 'deleted'), headers: headers(), secrets: [secret], now }).ok,
    ).toBe(false);
    expect(verifyWebhook({ rawBody: body, headers: headers(), secrets: ['whsec_wrong'], now }).ok).toBe(false);
    const other = String(Number(ts) - 10);
    expect(
      verifyWebhook({
        rawBody: body,
        headers: headers({ sig: `v1=${hex(secret, other, body)}` }),
        secrets: [secret],
        now,
      }).ok,
    ).toBe(false);
  });

  it('rejects timestamps outside the 300 s window, and accepts its edges', () => {
    for (const d of [-300, 300]) {
      const t = String(Number(ts) + d);
      expect(verifyWebhook({ rawBody: body, headers: headers({ ts: t }), secrets: [secret], now }).ok).toBe(true);
    }
    for (const d of [-301, 301, -86_400]) {
      const t = String(Number(ts) + d);
      expect(verifyWebhook({ rawBody: body, headers: headers({ ts: t }), secrets: [secret], now })).toEqual({
        ok: false,
        reason: 'timestamp_out_of_window',
      });
    }
  });

  it('rejects malformed timestamps and signature headers', () => {
    for (const t of ['', 'abc', '1e9', '12.5', '-5', 'NaN', 'Infinity', '99999999999999999999']) {
      const r = verifyWebhook({
        rawBody: body,
        headers: { ...headers(), 'Svc-Webhook-Timestamp': t },
        secrets: [secret],
        now,
      });
      expect(r.ok, t).toBe(false);
    }
    const good = hex(secret, ts, body);
    for (const s of [
      '',
      good,
      `v2=${good}`,
      `v1=${good.slice(0, 63)}`,
      `v1=${good}00`,
      `v1=${good.toUpperCase()}x`,
      'v1=',
      ',,,',
    ]) {
      const r = verifyWebhook({ rawBody: body, headers: headers({ sig: s }), secrets: [secret], now });
      expect(r.ok, s).toBe(false);
    }
    const { 'Svc-Webhook-Signature': _drop, ...noSig } = headers();
    expect(verifyWebhook({ rawBody: body, headers: noSig, secrets: [secret], now })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(verifyWebhook({ rawBody: body, headers: headers(), secrets: [], now })).toEqual({
      ok: false,
      reason: 'no_secret',
    });
  });

  it('checks the legacy X-Webhook-Signature over the raw body', () => {
    const legacy = createHmac('sha256', secret).update(body).digest('hex');
    expect(verifyLegacyWebhookSignature(body, legacy, [secret])).toBe(true);
    expect(verifyLegacyWebhookSignature(`${body} `, legacy, [secret])).toBe(false);
    expect(verifyLegacyWebhookSignature(body, legacy.slice(2), [secret])).toBe(false);
    expect(verifyLegacyWebhookSignature(body, undefined, [secret])).toBe(false);
  });
});
