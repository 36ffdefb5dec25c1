import { createServer, type IncomingMessage, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { verifyWebhook } from '../src/webhooks/verifyWebhook.js';

/** One signed delivery as the receiver got it. */
export interface Receipt {
  /** Wall-clock time of receipt (ms since the epoch, sub-millisecond precision). */
  at: number;
  /** `createdAt` of the event (v2 body): set inside the transaction that committed it. */
  eventCreatedAt: number;
  /** `data.object.id`: the message id. */
  objectId: string;
  deliveryId: string;
  hook: number;
}

/** A local webhook receiver on 127.0.0.1: verifies every signature (spec 6.4) and records the receipt time. */
export interface WebhookReceiver {
  /** URL for webhook number `hook` (each webhook gets its own path, so its secret is known). */
  urlFor(hook: number): string;
  setSecret(hook: number, secret: string): void;
  receipts: Receipt[];
  /** Requests refused because the signature did not verify (must stay 0). */
  rejected: number;
  close(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<number, string>();
  const receipts: Receipt[] = [];
  const state = { rejected: 0 };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const at = now();
    const hook = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    const secret = secrets.get(hook);
    const v = secret ? verifyWebhook({ rawBody: body, headers: req.headers, secrets: [secret] }) : { ok: false as const };
    if (!v.ok) {
      state.rejected++;
      res.writeHead(401).end();
      return;
    }
    // only a verified body is parsed (spec 6.4)
    const event = JSON.parse(body.toString('utf8')) as { createdAt: string; data: { object: { id: string } } };
    receipts.push({ at, eventCreatedAt: Date.parse(event.createdAt), objectId: event.data.object.id, deliveryId: v.deliveryId ?? '', hook });
    res.writeHead(200, { 'Content-Length': '0' }).end();
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    urlFor: (hook) => `http://127.0.0.1:${port}/hook/${hook}`,
    setSecret: (hook, secret) => void secrets.set(hook, secret),
    receipts,
    get rejected() {
      return state.rejected;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
