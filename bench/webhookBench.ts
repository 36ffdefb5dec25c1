import { performance } from 'node:perf_hooks';
import { quantile, runLoad } from './runLoad.js';
import type { Receipt, WebhookReceiver } from './webhookReceiver.js';

/** The webhook scenario's figures: delays in milliseconds. */
export interface WebhookFigures {
  /** Messages committed (201 answers). */
  events: number;
  /** The rate the server accepted them at (may be below the rate asked for). */
  postedPerSecond: number;
  /** Distinct signed deliveries received and verified. */
  delivered: number;
  expected: number;
  /** Deliveries per second from the first commit to the last receipt. */
  deliveriesPerSecond: number;
  eventsPerSecond: number;
  /** Commit → receipt, from the event's `createdAt` (stamped inside the committing transaction: an upper bound). */
  p50: number;
  p99: number;
  max: number;
  /** Same, from the moment the 201 reached the load generator (a lower bound). */
  p99FromResponse: number;
  /** Seconds the receiver still needed after the writes stopped. */
  drainSeconds: number;
}

export interface WebhookRunOptions {
  baseUrl: string;
  apiKey: string;
  roomId: string;
  /** Hook numbers subscribed to the room. */
  hooks: number[];
  /** Events per second. */
  rate: number;
  seconds: number;
  connections: number;
  /** Longest wait for the backlog after the writes stop. */
  drainLimitSeconds: number;
}

const now = () => performance.timeOrigin + performance.now();

/**
 * Posts messages to a room with webhooks at a fixed rate, then waits until every delivery arrived (or the
 * drain limit passed) and measures the commit-to-receipt delay and the sustained delivery rate.
 */
export async function measureWebhooks(receiver: WebhookReceiver, o: WebhookRunOptions): Promise<WebhookFigures> {
  const hooks = new Set(o.hooks);
  const answered = new Map<string, number>();
  const from = receiver.receipts.length;
  const started = now();
  await runLoad(
    o.baseUrl,
    {
      method: 'POST',
      path: `/v1/rooms/${o.roomId}/messages`,
      headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'Webhook benchmark' }),
      onResponse: (status, body) => {
        if (status === 201) answered.set((JSON.parse(body) as { id: string }).id, now());
      },
    },
    { seconds: o.seconds, connections: o.connections, overallRate: o.rate },
  );
  const writesDone = now();
  const expected = answered.size * hooks.size;
  const mine = (): Receipt[] =>
    receiver.receipts.slice(from).filter((r) => hooks.has(r.hook) && answered.has(r.objectId));
  const distinct = (rs: Receipt[]) => new Set(rs.map((r) => r.deliveryId)).size;
  while (distinct(mine()) < expected && now() - writesDone < o.drainLimitSeconds * 1000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const seen = new Set<string>();
  const rs = mine().filter((r) => !seen.has(r.deliveryId) && seen.add(r.deliveryId));
  const delays = rs.map((r) => r.at - r.eventCreatedAt);
  const fromResponse = rs.map((r) => r.at - (answered.get(r.objectId) ?? r.at));
  const firstCommit = Math.min(...rs.map((r) => r.eventCreatedAt));
  const lastReceipt = Math.max(...rs.map((r) => r.at));
  const span = (lastReceipt - firstCommit) / 1000;
  const eventsDelivered = new Set(rs.map((r) => r.objectId)).size;
  return {
    events: answered.size,
    postedPerSecond: answered.size / ((writesDone - started) / 1000),
    delivered: rs.length,
    expected,
    deliveriesPerSecond: rs.length ? rs.length / span : 0,
    eventsPerSecond: rs.length ? eventsDelivered / span : 0,
    p50: quantile(delays, 0.5),
    p99: quantile(delays, 0.99),
    max: Math.max(...delays),
    p99FromResponse: quantile(fromResponse, 0.99),
    drainSeconds: rs.length ? Math.max(0, (lastReceipt - writesDone) / 1000) : 0,
  };
}
