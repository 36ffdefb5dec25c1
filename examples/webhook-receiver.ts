// A minimal webhook receiver that verifies every request before trusting it (docs/webhooks.md#verifying-a-delivery).
//
//   WEBHOOK_SECRETS=whsec_… PORT=4000 npx tsx examples/webhook-receiver.ts
//
// WEBHOOK_SECRETS is a comma-separated list: during a rotation, hold the current and the next secret.
// Register it with:  npx svc webhook create --room room_… --url http://127.0.0.1:4000/hook
// (an internal address: the server's SVC_SSRF_ALLOWLIST must allow it, e.g. 127.0.0.1/32).
import { createServer } from 'node:http';
import { verifyWebhook } from '../src/webhooks/verifyWebhook.js';

const secrets = (process.env.WEBHOOK_SECRETS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const port = Number(process.env.PORT ?? 4000);
const MAX_BODY = 1024 * 1024;
if (!secrets.length) {
  console.error('Set WEBHOOK_SECRETS to the webhook secret (comma-separated during a rotation).');
  process.exit(1);
}

// Svc-Webhook-Id identifies the event: a redelivery (or an at-least-once retry) repeats it. Keep this in a
// database in a real receiver.
const processed = new Set<string>();

createServer((req, res) => {
  if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    // 1. verify the raw bytes, before any JSON parsing
    const rawBody = Buffer.concat(chunks);
    const v = verifyWebhook({ rawBody, headers: req.headers, secrets });
    if (!v.ok) {
      console.log(JSON.stringify({ rejected: v.reason }));
      // a 4xx other than 408/429 tells the sender not to retry
      return void res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: v.reason }));
    }
    // 2. deduplicate on the event id
    if (v.eventId && processed.has(v.eventId)) return void res.writeHead(200).end('duplicate');
    if (v.eventId) processed.add(v.eventId);
    // 3. only now parse and use it; the payload is ID-only, fetch details through the API
    const event = JSON.parse(rawBody.toString('utf8'));
    console.log(JSON.stringify({ received: v.eventId, type: v.eventType, delivery: v.deliveryId, event }));
    res.writeHead(204).end();
  });
}).listen(port, '127.0.0.1', () => console.log(`webhook receiver listening on http://127.0.0.1:${port}/hook`));
