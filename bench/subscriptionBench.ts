import { performance } from 'node:perf_hooks';
import { openListen } from '../test/mcp/listenStream.js';
import { quantile, runLoad } from './runLoad.js';

/** The subscription scenario's figures: delays in milliseconds. */
export interface SubscriptionFigures {
  /** Messages the server accepted (201). */
  events: number;
  postedPerSecond: number;
  /** `notifications/resources/updated` received on the stream. */
  notified: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SubscriptionRunOptions {
  baseUrl: string;
  apiKey: string;
  roomId: string;
  rate: number;
  seconds: number;
  connections: number;
}

const now = () => performance.timeOrigin + performance.now();

/**
 * One MCP `subscriptions/listen` stream on a room's messages while messages are posted to it at a fixed rate:
 * the delay from each write's 201 to its notification. Notifications carry no message id, so the k-th
 * notification is paired with the k-th 201 in time order (both follow commit order closely).
 */
export async function measureSubscriptions(o: SubscriptionRunOptions): Promise<SubscriptionFigures> {
  const stream = await openListen(
    o.baseUrl,
    { resourceSubscriptions: [`svc://rooms/${o.roomId}/messages`] },
    { token: o.apiKey },
  );
  if (stream.error) throw new Error(`subscriptions/listen did not open a stream: ${stream.error.message}`);
  if ((await stream.nextMessage())?.method !== 'notifications/subscriptions/acknowledged')
    throw new Error('subscriptions/listen did not acknowledge first');
  const arrivals: number[] = [];
  const reading = (async () => {
    for (let m = await stream.nextMessage(); m; m = await stream.nextMessage())
      if (m.method === 'notifications/resources/updated') arrivals.push(now());
  })();

  const answered: number[] = [];
  const started = now();
  await runLoad(
    o.baseUrl,
    {
      method: 'POST',
      path: `/v1/rooms/${o.roomId}/messages`,
      headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'Subscription benchmark' }),
      onResponse: (status) => {
        if (status === 201) answered.push(now());
      },
    },
    { seconds: o.seconds, connections: o.connections, overallRate: o.rate },
  );
  const writesDone = now();
  while (arrivals.length < answered.length && now() - writesDone < 10_000) await new Promise((r) => setTimeout(r, 50));
  stream.close();
  await reading;
  answered.sort((a, b) => a - b);
  const delays = arrivals.slice(0, answered.length).map((at, k) => Math.max(0, at - answered[k]));
  return {
    events: answered.length,
    postedPerSecond: answered.length / ((writesDone - started) / 1000),
    notified: arrivals.length,
    p50: quantile(delays, 0.5),
    p99: quantile(delays, 0.99),
    max: delays.length ? Math.max(...delays) : 0,
  };
}
