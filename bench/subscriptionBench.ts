import { performance } from 'node:perf_hooks';
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
  const uri = `svc://rooms/${o.roomId}/messages`;
  const aborted = new AbortController();
  const res = await fetch(`${o.baseUrl}/mcp`, {
    method: 'POST',
    signal: aborted.signal,
    headers: {
      authorization: `Bearer ${o.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: {
        notifications: { resourceSubscriptions: [uri] },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'svc-bench', version: '1' },
        },
      },
    }),
  });
  if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream'))
    throw new Error(`subscriptions/listen did not open a stream: ${res.status} ${await res.text()}`);
  const arrivals: number[] = [];
  let acknowledged: () => void = () => undefined;
  const ack = new Promise<void>((r) => (acknowledged = r));
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let sep: number;
        while ((sep = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, sep);
          buffer = buffer.slice(sep + 2);
          if (frame.includes('notifications/resources/updated')) arrivals.push(now());
          else if (frame.includes('notifications/subscriptions/acknowledged')) acknowledged();
        }
      }
    } catch {
      /* aborted at the end */
    }
  })();
  await ack;

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
  aborted.abort();
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
