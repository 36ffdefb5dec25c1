import { createServer, type IncomingMessage, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Webhook as StandardWebhook } from 'standardwebhooks';
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

/**
 * A local webhook receiver on 127.0.0.1: verifies every signature and, for a hook given its
 * Standard Webhooks secret, the `webhook-*` headers too with the `standardwebhooks` reference library, as a
 * receiver elsewhere would; records the receipt time.
 */
export interface WebhookReceiver {
  /** URL for webhook number `hook` (each webhook gets its own path, so its secret is known). */
  urlFor(hook: number): string;
  /** `standard`: the same secret as `whsec_…` (then both signatures must verify). */
  setSecret(hook: number, secret: string, standard?: string): void;
  receipts: Receipt[];
  /** Requests refused because a signature did not verify (must stay 0). */
  rejected: number;
  /** Deliveries whose Standard Webhooks signature verified as well. */
  standardVerified: number;
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
  const standards = new Map<number, StandardWebhook>();
  const state = { rejected: 0, standardVerified: 0 };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const at = now();
    const hook = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    const secret = secrets.get(hook);
    const v = secret
      ? verifyWebhook({ rawBody: body, headers: req.headers, secrets: [secret] })
      : { ok: false as const };
    const standard = standards.get(hook);
    let standardOk = true;
    if (standard) {
      try {
        standard.verify(body.toString('utf8'), req.headers as Record<string, string>);
      } catch {
        standardOk = false;
      }
    }
    if (!v.ok || !standardOk) {
      state.rejected++;
      res.writeHead(401).end();
      return;
    }
    if (standard) state.standardVerified++;
    // only a verified body is parsed
    const event = JSON.parse(body.toString('utf8')) as { createdAt: string; data: { object: { id: string } } };
    receipts.push({
      at,
      eventCreatedAt: Date.parse(event.createdAt),
      objectId: event.data.object.id,
      deliveryId: v.deliveryId ?? '',
      hook,
    });
    res.writeHead(200, { 'Content-Length': '0' }).end();
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    urlFor: (hook) => `http://127.0.0.1:${port}/hook/${hook}`,
    setSecret: (hook, secret, standard) => {
      secrets.set(hook, secret);
      if (standard) standards.set(hook, new StandardWebhook(standard));
    },
    receipts,
    get rejected() {
      return state.rejected;
    },
    get standardVerified() {
      return state.standardVerified;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
