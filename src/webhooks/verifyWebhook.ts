import { createHmac, timingSafeEqual } from 'node:crypto';

// The receiver's side of the signature (docs/webhooks.md#verifying-a-delivery). Self-contained (node:crypto only) so a
// receiver can import or copy it.

/** A request whose timestamp differs from the receiver's clock by more than this is rejected. */
export const WEBHOOK_REPLAY_WINDOW_SECONDS = 300;

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The raw request body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** The request headers (a Fetch `Headers`, or Node's `req.headers`). */
  headers: HeaderBag;
  /** Every secret the receiver holds (during a rotation: the current and the next one). */
  secrets: string[];
  /** Replay window in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock (default: now). */
  now?: () => Date;
}

export type VerifyWebhookResult =
  | { ok: true; eventId: string | null; deliveryId: string | null; eventType: string | null; timestamp: number }
  | {
      ok: false;
      reason:
        | 'missing_timestamp'
        | 'invalid_timestamp'
        | 'timestamp_out_of_window'
        | 'missing_signature'
        | 'no_valid_signature'
        | 'signature_mismatch'
        | 'no_secret';
    };

function header(h: HeaderBag, name: string): string | undefined {
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const bag = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v.join(',') : v;
}

const SIGNATURE_ENTRY = /^v1=([0-9a-f]{64})$/;

/**
 * Verifies a webhook request: `Svc-Webhook-Timestamp` must be an integer within the replay
 * window; `Svc-Webhook-Signature` is split on commas and only `v1=<hex>` entries count; the request is
 * valid when any entry equals HMAC-SHA256(secret, `<timestamp>.<raw body>`) for any secret held,
 * compared in constant time on equal lengths. Only after `ok` may the body be parsed and trusted;
 * deduplicate on `eventId` (`Svc-Webhook-Id`), not on the body's id.
 */
export function verifyWebhook(o: VerifyWebhookOptions): VerifyWebhookResult {
  const secrets = o.secrets.filter((x) => typeof x === 'string' && x.length > 0);
  if (!secrets.length) return { ok: false, reason: 'no_secret' };
  const ts = header(o.headers, 'svc-webhook-timestamp')?.trim();
  if (!ts) return { ok: false, reason: 'missing_timestamp' };
  if (!/^\d{1,15}$/.test(ts) || !Number.isFinite(Number(ts))) return { ok: false, reason: 'invalid_timestamp' };
  const timestamp = Number(ts);
  const nowSeconds = Math.floor((o.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (o.toleranceSeconds ?? WEBHOOK_REPLAY_WINDOW_SECONDS)) {
    return { ok: false, reason: 'timestamp_out_of_window' };
  }
  const sigHeader = header(o.headers, 'svc-webhook-signature');
  if (!sigHeader) return { ok: false, reason: 'missing_signature' };
  const provided = sigHeader
    .split(',')
    .map((e) => SIGNATURE_ENTRY.exec(e.trim())?.[1])
    .filter((x): x is string => !!x)
    .map((hex) => Buffer.from(hex, 'hex'));
  if (!provided.length) return { ok: false, reason: 'no_valid_signature' };
  const body = typeof o.rawBody === 'string' ? Buffer.from(o.rawBody, 'utf8') : Buffer.from(o.rawBody);
  let match = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    // no early exit: every comparison runs, each in constant time on equal lengths
    for (const p of provided) if (p.length === expected.length && timingSafeEqual(p, expected)) match = true;
  }
  if (!match) return { ok: false, reason: 'signature_mismatch' };
  return {
    ok: true,
    timestamp,
    eventId: header(o.headers, 'svc-webhook-id') ?? null,
    deliveryId: header(o.headers, 'svc-webhook-delivery') ?? null,
    eventType: header(o.headers, 'svc-webhook-type') ?? null,
  };
}

/**
 * The legacy v1 check, for receivers not yet moved to `Svc-Webhook-Signature`:
 * `X-Webhook-Signature` is HMAC-SHA256 hex over the raw body, with the current secret. It has no timestamp
 * and so no replay protection; prefer verifyWebhook.
 */
export function verifyLegacyWebhookSignature(
  rawBody: string | Uint8Array,
  signatureHex: string | undefined,
  secrets: string[],
): boolean {
  if (!signatureHex || !/^[0-9a-f]{64}$/.test(signatureHex.trim())) return false;
  const given = Buffer.from(signatureHex.trim(), 'hex');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  let match = false;
  for (const secret of secrets.filter(Boolean)) {
    const expected = createHmac('sha256', secret).update(body).digest();
    if (timingSafeEqual(given, expected)) match = true;
  }
  return match;
}
