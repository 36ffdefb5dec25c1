// What the Standard Webhooks headers cost per delivery, in one process, without the network: the sender's
// headers with and without them, and a receiver's verification with the spec's own verifier and with the
// `standardwebhooks` library. `npx tsx bench/standardSigningCost.ts [iterations]`.
import { performance } from 'node:perf_hooks';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import {
  buildDeliveryHeaders,
  signatureHeader,
  standardSecret,
  standardSignatureHeader,
} from '../src/webhooks/signing.js';
import { verifyWebhook } from '../src/webhooks/verifyWebhook.js';

const n = Number(process.argv[2] ?? 50_000);
const secret = 'whsec_' + 'k'.repeat(43);
const body = Buffer.from(
  JSON.stringify({
    id: 'evt_3q2-7wEVjvXq0mFz7f4ZTA',
    type: 'message.created',
    apiVersion: '2026-06-09',
    createdAt: new Date().toISOString(),
    organizationId: 'org_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
    roomId: 'room_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
    data: { object: { id: 'msg_01KAR3V6X5Q2Z8N4M7P9W1T3YB', type: 'message' } },
  }),
);
const input = {
  apiVersion: '2026-06-09' as const,
  eventId: 'evt_3q2-7wEVjvXq0mFz7f4ZTA',
  eventType: 'message.created',
  deliveryId: crypto.randomUUID(),
  secrets: { current: secret, next: null },
  body,
  now: new Date(),
  customHeaders: [],
};

function time(label: string, f: () => unknown): void {
  for (let i = 0; i < Math.min(n, 5000); i++) f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  console.log(`${label.padEnd(62)} ${(((performance.now() - t0) * 1000) / n).toFixed(2)} µs`);
}

const headers = buildDeliveryHeaders(input) as Record<string, string>;
const spec = Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith('webhook-')));
const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
const std = new StandardWebhook(standardSecret(secret));
const raw = body.toString('utf8');

console.log(`${n} iterations, node ${process.version}`);
time('sender: every header of one attempt (both schemes)', () => buildDeliveryHeaders(input));
time('sender: of which Svc-Webhook-Signature (hex HMAC)', () => signatureHeader(input.secrets, 1_790_000_000, body));
time('sender: of which webhook-signature (base64 HMAC)', () =>
  standardSignatureHeader(input.secrets, input.eventId, 1_790_000_000, body),
);
time('receiver: verifyWebhook (Svc-Webhook-Signature)', () =>
  verifyWebhook({ rawBody: body, headers: spec, secrets: [secret] }),
);
time('receiver: standardwebhooks Webhook.verify (webhook-signature)', () => std.verify(raw, lower));
