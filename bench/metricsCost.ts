// `npm run bench:metrics`: what Prometheus metrics cost a GET /v1/me (target: TARGET_RATIO of req/s). Two
// product servers started as `npm start` starts them on one seeded database, one with SVC_METRICS_TOKEN and
// one without, driven alternately with GET /v1/me (the order flips every round, so drift in the machine's
// load falls on both); prints per round and the medians, the ratio on/off, and PASS/FAIL. A measurement,
// not a test: it exits 0 whatever the verdict (bench/README.md).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, startChildServer, type ChildServer } from './childServer.js';
import { median, runLoad, type LoadResult, type LoadTarget } from './runLoad.js';
import { seedBench } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET_RATIO = 0.95;
const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  const opts = readBenchOptions();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-metrics-'));
  const [offPort, onPort] = [await freePort(), await freePort()];
  const token = randomBytes(24).toString('base64url');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
    DATA_DIR: dir,
    SVC_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    SVC_RATE_LIMIT: '1000000000',
    SVC_MONTHLY_UNITS: '1000000000000',
    SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
    SVC_WORKER: 'off',
  };
  delete env.SVC_METRICS_TOKEN;
  console.log(
    `svc bench, metrics cost: ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, node ${process.version}`,
  );
  console.log(
    `  ${opts.rounds} rounds x ${opts.seconds} s per server, ${opts.connections} connections; load average ${loadavg()}`,
  );
  const world = await seedBench({ env, largeMessages: 1_001, extraRooms: 0, webhooks: null });

  const servers: ChildServer[] = [];
  const stopAll = () => Promise.all(servers.map((s) => s.stop()));
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    const args = productArgs(ROOT);
    const off = await startChildServer({
      name: 'metrics off',
      args,
      env: { ...env, PORT: String(offPort) },
      port: offPort,
      cwd: ROOT,
    });
    servers.push(off);
    const on = await startChildServer({
      name: 'metrics on',
      args,
      env: { ...env, PORT: String(onPort), SVC_METRICS_TOKEN: token, SVC_INSTANCE_ID: 'bench' },
      port: onPort,
      cwd: ROOT,
    });
    servers.push(on);
    const target: LoadTarget = { method: 'GET', path: '/v1/me', headers: { authorization: `Bearer ${world.apiKey}` } };
    const results = new Map<ChildServer, LoadResult[]>([
      [off, []],
      [on, []],
    ]);
    if (opts.warmup)
      for (const s of [off, on])
        await runLoad(s.baseUrl, target, { seconds: opts.warmup, connections: opts.connections });
    for (let round = 1; round <= opts.rounds; round++) {
      console.log(`\nround ${round}/${opts.rounds}  (load average ${loadavg()})`);
      for (const s of round % 2 ? [off, on] : [on, off]) {
        const cpu0 = s.cpuMs();
        const r = await runLoad(s.baseUrl, target, { seconds: opts.seconds, connections: opts.connections });
        r.cpuUsPerRequest = r.total ? ((s.cpuMs() - cpu0) * 1000) / r.total : undefined;
        results.get(s)!.push(r);
        const bad = r.failures ? `  (${r.failures} failed: ${JSON.stringify(r.statusCodes)})` : '';
        console.log(
          `  GET /v1/me, ${s.name.padEnd(12)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  server CPU ${r.cpuUsPerRequest?.toFixed(0) ?? '?'} µs/request${bad}`,
        );
      }
    }
    // the metrics server did count them (a scrape, as Prometheus would)
    const scrape = await fetch(`${on.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const text = await scrape.text();
    const counted = /^svc_requests_total\{[^}]*operation="GET \/v1\/me"[^}]*status_class="2xx"[^}]*\} (\d+)/m.exec(
      text,
    )?.[1];
    const summary = (s: ChildServer) => {
      const rs = results.get(s)!;
      return {
        rps: median(rs.map((r) => r.rps)),
        cpu: median(rs.map((r) => r.cpuUsPerRequest ?? 0)),
        p99: median(rs.map((r) => r.p99)),
      };
    };
    const a = summary(off);
    const b = summary(on);
    const ratio = b.rps / a.rps;
    console.log('\nmedians');
    console.log(
      `  metrics off  ${a.rps.toFixed(0).padStart(7)} req/s  p99 ${a.p99} ms  server CPU ${a.cpu.toFixed(0)} µs/request`,
    );
    console.log(
      `  metrics on   ${b.rps.toFixed(0).padStart(7)} req/s  p99 ${b.p99} ms  server CPU ${b.cpu.toFixed(0)} µs/request`,
    );
    console.log(
      `  on/off: ${(ratio * 100).toFixed(1)} % of req/s, ${b.cpu && a.cpu ? `${(((b.cpu - a.cpu) / a.cpu) * 100).toFixed(1)} % more CPU per request` : ''}`,
    );
    console.log(`  scrape: ${scrape.status}, svc_requests_total{GET /v1/me, 2xx} = ${counted ?? 'missing'}`);
    console.log(
      `  target: metrics on >= ${TARGET_RATIO * 100} % of metrics off  ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'}`,
    );
    if (opts.jsonFile)
      fs.writeFileSync(opts.jsonFile, JSON.stringify({ options: opts, off: a, on: b, ratio }, null, 2));
  } finally {
    await stopAll();
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
