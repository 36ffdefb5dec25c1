import type { WebhookFigures } from './webhookBench.js';

/** Medians of one scenario over the rounds, or why it was skipped. */
export type ScenarioRow =
  | {
      name: string;
      label: string;
      rps: number;
      p50: number;
      p99: number;
      failures: number;
      rssPeak?: number;
      cpuUsPerRequest?: number;
    }
  | { name: string; label: string; skipped: string };

export interface ReportInput {
  rows: ScenarioRow[];
  /** Webhook figures, a skip reason, or null when not run. */
  latency: WebhookFigures | string | null;
  fanout: WebhookFigures | string | null;
  rssPeak: number;
  bareRssPeak: number;
  webhookRss?: number;
  /** The PostgreSQL product's RSS peak, when BENCH_DATABASE_URL ran it too. */
  pgRssPeak?: number;
}

export interface TargetVerdict {
  target: string;
  verdict: 'PASS' | 'FAIL' | 'SKIPPED';
  measured: string;
}

const MB = 1024 * 1024;
/** The server's RSS target through the whole bench. */
const RSS_LIMIT = 200 * MB;

/** Each of these at least half of GET /v1/me's req/s in the same run (same engine). */
export const HALF_OF_ME = [
  'rooms',
  'list-1k',
  'list-1k-deep',
  'list-large',
  'list-large-deep',
  'post-message',
  'patch-task',
  'mcp-list-messages',
];

const measuredRow = (rows: ScenarioRow[], name: string) => {
  const r = rows.find((x) => x.name === name);
  return r && !('skipped' in r) ? r : undefined;
};

/** The bench's targets, judged on the medians. */
export function judgeTargets(i: ReportInput): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const judge = (target: string, ok: boolean | null, measured: string) =>
    out.push({ target, verdict: ok === null ? 'SKIPPED' : ok ? 'PASS' : 'FAIL', measured });
  const bare = measuredRow(i.rows, 'bare');
  const me = measuredRow(i.rows, 'me');
  const mcp = measuredRow(i.rows, 'mcp-get-me');
  if (bare && me) {
    const ratio = me.rps / bare.rps;
    judge(
      'GET /v1/me >= 60% of bare Express req/s',
      ratio >= 0.6,
      `${(ratio * 100).toFixed(1)}% (${me.rps.toFixed(0)} / ${bare.rps.toFixed(0)} req/s)`,
    );
  }
  const mcpRow = i.rows.find((x) => x.name === 'mcp-get-me');
  if (mcpRow && 'skipped' in mcpRow) judge('MCP get_me >= 50% of REST GET /v1/me', null, mcpRow.skipped);
  else if (mcp && me) {
    const ratio = mcp.rps / me.rps;
    judge(
      'MCP get_me >= 50% of REST GET /v1/me',
      ratio >= 0.5,
      `${(ratio * 100).toFixed(1)}% (${mcp.rps.toFixed(0)} / ${me.rps.toFixed(0)} req/s)`,
    );
  }
  // both MCP revisions: >= 75% of REST /v1/me, and faster than the v2 SDK's own bare server answering the same JSON
  for (const [ours, sdk, revision] of [
    ['mcp-get-me', 'sdk-mcp-get-me', '2025'],
    ['mcp-get-me-2026', 'sdk-mcp-get-me-2026', '2026-07-28'],
  ]) {
    const row = measuredRow(i.rows, ours);
    const bareSdk = measuredRow(i.rows, sdk);
    if (row && me) {
      const ratio = row.rps / me.rps;
      judge(
        `MCP ${revision} get_me >= 75% of REST GET /v1/me`,
        ratio >= 0.75,
        `${(ratio * 100).toFixed(1)}% (${row.rps.toFixed(0)} / ${me.rps.toFixed(0)} req/s)`,
      );
    }
    if (row && bareSdk) {
      const ratio = row.rps / bareSdk.rps;
      judge(
        `MCP ${revision} get_me > the bare v2 SDK server`,
        ratio > 1,
        `${ratio.toFixed(2)}x (${row.rps.toFixed(0)} / ${bareSdk.rps.toFixed(0)} req/s)`,
      );
    }
  }
  if (typeof i.fanout === 'string') judge('webhook delivery >= 1,000 deliveries/s sustained', null, i.fanout);
  else if (i.fanout) {
    const f = i.fanout;
    judge(
      'webhook delivery >= 1,000 deliveries/s sustained',
      f.deliveriesPerSecond >= 1000 && f.delivered === f.expected,
      `${f.deliveriesPerSecond.toFixed(0)} deliveries/s (${f.delivered}/${f.expected} delivered)`,
    );
  }
  if (typeof i.latency === 'string') judge('webhook p99 commit-to-receipt < 250 ms at 200/s', null, i.latency);
  else if (i.latency) {
    const l = i.latency;
    judge(
      'webhook p99 commit-to-receipt < 250 ms at 200/s',
      l.p99 < 250 && l.delivered === l.expected,
      `p99 ${l.p99.toFixed(0)} ms (${l.delivered}/${l.expected} delivered)`,
    );
  }
  for (const [first, deep] of [
    ['list-1k', 'list-large'],
    ['list-1k-deep', 'list-large-deep'],
  ]) {
    const a = measuredRow(i.rows, first);
    const b = measuredRow(i.rows, deep);
    if (a && b) {
      const ratio = b.p50 / Math.max(a.p50, 0.001);
      judge(
        `listing p50 (${first.endsWith('deep') ? 'deep page' : 'first page'}) at large <= 1.5x at 1k`,
        ratio <= 1.5,
        `${b.p50} ms vs ${a.p50} ms (${ratio.toFixed(2)}x)`,
      );
    }
  }
  for (const prefix of ['', 'pg:']) {
    const base = measuredRow(i.rows, `${prefix}me`);
    if (!base) continue;
    for (const name of HALF_OF_ME) {
      const r = measuredRow(i.rows, `${prefix}${name}`);
      if (!r) continue;
      const ratio = r.rps / base.rps;
      judge(
        `${r.label} >= 50% of GET /v1/me req/s${prefix ? ' (PostgreSQL)' : ''}`,
        ratio >= 0.5,
        `${(ratio * 100).toFixed(1)}% (${r.rps.toFixed(0)} / ${base.rps.toFixed(0)} req/s; CPU ${r.cpuUsPerRequest?.toFixed(0) ?? '?'} vs ${base.cpuUsPerRequest?.toFixed(0) ?? '?'} µs/request)`,
      );
    }
  }
  judge('server RSS < 200 MB throughout', i.rssPeak < RSS_LIMIT, `peak ${(i.rssPeak / MB).toFixed(0)} MB`);
  if (i.pgRssPeak)
    judge(
      'server RSS < 200 MB throughout (PostgreSQL)',
      i.pgRssPeak < RSS_LIMIT,
      `peak ${(i.pgRssPeak / MB).toFixed(0)} MB`,
    );
  return out;
}

/** Prints the medians table, the webhook figures and the verdicts; returns them for BENCH_JSON. */
export function printReport(i: ReportInput): { rows: ScenarioRow[]; webhooks: unknown; targets: TargetVerdict[] } {
  const bare = measuredRow(i.rows, 'bare');
  console.log('\nmedians over the rounds');
  console.log(
    `  ${'scenario'.padEnd(32)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs bare'.padStart(8)} ${'vs me'.padStart(7)} ${'CPU µs/req'.padStart(11)}  RSS peak`,
  );
  for (const r of i.rows) {
    if ('skipped' in r) {
      console.log(`  ${r.label.padEnd(32)} ${r.skipped}`);
      continue;
    }
    const ratio = bare && !r.name.startsWith('pg:') ? `${((r.rps / bare.rps) * 100).toFixed(1)}%` : '';
    const me = measuredRow(i.rows, r.name.startsWith('pg:') ? 'pg:me' : 'me');
    const vsMe = me && r.name !== 'bare' ? `${((r.rps / me.rps) * 100).toFixed(1)}%` : '';
    const rss = r.rssPeak ? `${(r.rssPeak / MB).toFixed(0)} MB` : '';
    const failed = r.failures ? `  ${r.failures} failed requests` : '';
    const cpu = r.cpuUsPerRequest ? r.cpuUsPerRequest.toFixed(0) : '';
    console.log(
      `  ${r.label.padEnd(32)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${ratio.padStart(8)} ${vsMe.padStart(7)} ${cpu.padStart(11)}  ${rss}${failed}`,
    );
  }
  for (const [title, f] of [
    ['webhooks at 200 events/s, 1 webhook', i.latency],
    ['webhook fan-out', i.fanout],
  ] as const) {
    if (f === null) continue;
    if (typeof f === 'string') {
      console.log(`\n${title}: ${f}`);
      continue;
    }
    console.log(
      `\n${title}: ${f.events} events committed (${f.postedPerSecond.toFixed(0)}/s), ${f.delivered}/${f.expected} signed deliveries received and verified`,
    );
    console.log(
      `  ${f.deliveriesPerSecond.toFixed(0)} deliveries/s, ${f.eventsPerSecond.toFixed(0)} events/s (first commit to last receipt)`,
    );
    console.log(
      `  commit to receipt: p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms, max ${f.max.toFixed(0)} ms` +
        ` (p99 from the 201 response: ${f.p99FromResponse.toFixed(0)} ms); drained ${f.drainSeconds.toFixed(1)} s after the writes`,
    );
  }
  if (i.webhookRss) console.log(`  server RSS peak during webhooks ${(i.webhookRss / MB).toFixed(0)} MB`);
  const targets = judgeTargets(i);
  console.log('\ntargets (issues 9 and 23)');
  for (const t of targets) console.log(`  ${t.verdict.padEnd(7)} ${t.target}: ${t.measured}`);
  return { rows: i.rows, webhooks: { latency: i.latency, fanout: i.fanout }, targets };
}
