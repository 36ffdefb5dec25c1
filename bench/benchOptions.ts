/** What one `npm run bench` does, from the environment (all optional). See bench/README.md. */
export interface BenchOptions {
  /** Seconds per measurement (BENCH_SECONDS, default 10). */
  seconds: number;
  /** Rounds; every scenario is measured once per round and the median is reported (BENCH_ROUNDS, default 3). */
  rounds: number;
  /** Unrecorded seconds per scenario before the first round (BENCH_WARMUP, default 3; 0 for none). */
  warmup: number;
  /** Concurrent connections of the load generator (BENCH_CONNECTIONS, default 10). */
  connections: number;
  /** Messages in the large room of the listing scenario (BENCH_LARGE_MESSAGES, default 1,000,000). */
  largeMessages: number;
  /** Webhooks on the fan-out room (BENCH_WEBHOOK_FANOUT, default 10). */
  webhookFanout: number;
  /** Events per second posted to the fan-out room (BENCH_WEBHOOK_RATE, default 150: 1,500 deliveries/s offered). */
  webhookRate: number;
  /** Scenario names to run (BENCH_ONLY, comma-separated); all when empty. */
  only: string[];
  /** Keep the temporary data directory (BENCH_KEEP=1). */
  keep: boolean;
  /** Write the results as JSON to this file too (BENCH_JSON). */
  jsonFile: string | undefined;
}

/** An integer variable of the environment, at least `min`; `def` when unset or empty. */
export function int(env: NodeJS.ProcessEnv, name: string, def: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export function readBenchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  return {
    seconds: int(env, 'BENCH_SECONDS', 10),
    rounds: int(env, 'BENCH_ROUNDS', 3),
    warmup: int(env, 'BENCH_WARMUP', 3, 0),
    connections: int(env, 'BENCH_CONNECTIONS', 10),
    largeMessages: int(env, 'BENCH_LARGE_MESSAGES', 1_000_000, 1_001),
    webhookFanout: int(env, 'BENCH_WEBHOOK_FANOUT', 10),
    webhookRate: int(env, 'BENCH_WEBHOOK_RATE', 150),
    only: (env.BENCH_ONLY ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    keep: env.BENCH_KEEP === '1',
    jsonFile: env.BENCH_JSON || undefined,
  };
}

/** BENCH_NODE_FLAGS: node flags (space-separated) a bench tool puts before the start script's own. */
export const benchNodeFlags = (env: NodeJS.ProcessEnv = process.env): string[] =>
  (env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
