import autocannon, { type RequestSpec } from 'autocannon';

/** One HTTP request shape driven by the load generator. */
export interface LoadTarget {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Called with every response (for example to note when a message was committed). */
  onResponse?: (status: number, body: string) => void;
}

/** What one measurement gave. Latencies in milliseconds. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  /** Non-2xx responses plus connection errors and timeouts: a scenario with any is not a clean figure. */
  failures: number;
  statusCodes: Record<string, number>;
  /** The server process's CPU time per request in µs (set by the caller, which knows the process). */
  cpuUsPerRequest?: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
  /** Requests per second across all connections (fixed-rate mode); unlimited when absent. */
  overallRate?: number;
  /** A fixed number of requests instead of `seconds` (autocannon's `amount`). */
  amount?: number;
}

/** Drives `baseUrl` with autocannon for `seconds` and returns mean req/s and p50/p99 latency. */
export function runLoad(baseUrl: string, target: LoadTarget, o: LoadOptions): Promise<LoadResult> {
  const request: RequestSpec = {
    method: target.method,
    path: target.path,
    headers: target.headers,
    body: target.body,
    onResponse: target.onResponse ? (status, body) => target.onResponse!(status, body) : undefined,
  };
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: baseUrl,
        connections: o.connections,
        duration: o.seconds,
        overallRate: o.overallRate,
        amount: o.amount,
        timeout: 30,
        requests: [request],
      },
      (err, r) => {
        if (err) return reject(err);
        const statusCodes = Object.fromEntries(
          Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, Number(v.count)]),
        );
        resolve({
          rps: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          total: r.requests.total,
          failures: r.non2xx + r.errors + r.timeouts,
          statusCodes,
        });
      },
    );
  });
}

export const median = (xs: number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * Each round's own ratio of `a` to `b`, two series measured round by round: both under the same neighbours, so on a
 * shared machine their median moves less than the ratio of two medians that may come from different rounds.
 */
export const roundRatios = (a: number[], b: number[]): number[] => a.map((x, i) => x / b[i]);

/** The q-quantile (0..1) of `xs`, nearest rank. */
export const quantile = (xs: number[], q: number): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
