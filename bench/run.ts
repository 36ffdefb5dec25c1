// `npm run bench`: the product and a bare Express server, each in its own process on this machine, driven
// alternately by autocannon; then the webhook fan-out. Prints medians, ratios and PASS/FAIL per target.
// Never fails for a missed target: it is a measurement, not a test (bench/README.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer, type ChildServer } from './childServer.js';
import { httpScenarios, probeMcp } from './httpScenarios.js';
import { printReport, type ScenarioRow } from './printReport.js';
import { median, runLoad, type LoadResult } from './runLoad.js';
import { provisionBenchPostgres, seedBench, webhooksAvailable } from './seedBench.js';
import { measureSubscriptions } from './subscriptionBench.js';
import { measureWebhooks, type WebhookFigures } from './webhookBench.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';
import { measureTokens, printTokens } from './tokens.js';
import { measureCli, printCli } from './cli.js';
import { measureLimit } from './limit/compare.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  const opts = readBenchOptions();
  const want = (name: string) => !opts.only.length || opts.only.includes(name);
  // what an LLM agent pays in tokens over MCP (in-process, seconds): first, and alone with BENCH_ONLY=tokens
  if (want('tokens')) printTokens(await measureTokens());
  // how fast the operator CLI answers, beside a bare `node -e 0` (subprocesses, seconds); alone with BENCH_ONLY=cli
  if (want('cli')) printCli(measureCli());
  // svc against the limit of the same work (bench/limit/): servers of its own; alone with BENCH_ONLY=limit
  if (want('limit')) await measureLimit(opts);
  if (opts.only.length && opts.only.every((n) => n === 'tokens' || n === 'cli' || n === 'limit')) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const [port, barePort] = [await freePort(), await freePort()];
  // the delivery worker as the product runs it (on, unless this environment says otherwise): the webhook
  // scenarios need it
  const env = productEnv(dir, port, { SVC_SSRF_ALLOWLIST: '127.0.0.1/32', SVC_WORKER: process.env.SVC_WORKER ?? 'on' });
  const secret = env.SVC_SECRET;
  console.log(`svc bench: ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, node ${process.version}`);
  console.log(`  ${opts.rounds} rounds x ${opts.seconds} s, ${opts.connections} connections, data in ${dir}`);
  console.log(
    `  load average before the run: ${loadavg()} (load generator, both servers and anything else share the machine)`,
  );

  let receiver: WebhookReceiver | null = null;
  const webhookSkip = webhooksAvailable() ? null : 'skipped: webhooks not available (no `svc webhook create`)';
  if (!webhookSkip) receiver = await startWebhookReceiver();

  const t0 = Date.now();
  const world = await seedBench({
    env,
    largeMessages: opts.largeMessages,
    extraRooms: 60,
    webhooks: receiver ? { urlFor: receiver.urlFor, fanout: opts.webhookFanout } : null,
  });
  for (const [hook, s] of world.webhookSecrets ?? [])
    receiver!.setSecret(hook, s, world.webhookStandardSecrets?.get(hook));
  console.log(
    `  seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s (${opts.largeMessages.toLocaleString('en')} messages in the large room)`,
  );

  // BENCH_DATABASE_URL: the same scenarios on a second product server on PostgreSQL (a database of its own)
  const pgBase = process.env.BENCH_DATABASE_URL;
  const pgDb = pgBase ? await provisionBenchPostgres(pgBase) : null;
  const pgPort = pgDb ? await freePort() : 0;
  const pgEnv: Record<string, string> | null = pgDb
    ? {
        ...env,
        PORT: String(pgPort),
        BASE_URL: `http://127.0.0.1:${pgPort}`,
        DATABASE_URL: pgDb.url,
        DATA_DIR: path.join(dir, 'pg'),
      }
    : null;
  let pgWorld: typeof world | null = null;
  if (pgEnv) {
    const t1 = Date.now();
    pgWorld = await seedBench({ env: pgEnv, largeMessages: opts.largeMessages, extraRooms: 60, webhooks: null });
    console.log(`  PostgreSQL (BENCH_DATABASE_URL) seeded in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  }

  const servers: ChildServer[] = [];
  const stopAll = () => Promise.all(servers.map((s) => s.stop()));
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    const product = await startChildServer({ name: 'product', args: productArgs(ROOT), env, port, cwd: ROOT });
    servers.push(product);
    const bare = await startChildServer({
      name: 'bare',
      args: ['--import', 'tsx', 'bench/bareServer.ts'],
      env: { ...env, PORT: String(barePort) },
      port: barePort,
      cwd: ROOT,
    });
    servers.push(bare);
    const productPg = pgEnv
      ? await startChildServer({ name: 'product-pg', args: productArgs(ROOT), env: pgEnv, port: pgPort, cwd: ROOT })
      : null;
    if (productPg) servers.push(productPg);
    const mcpSkip = await probeMcp(product.baseUrl, world.apiKey);

    const scenarios = httpScenarios(world, secret).filter((s) => want(s.name) || s.name === 'bare');
    if (pgWorld) {
      for (const s of httpScenarios(pgWorld, secret)) {
        if (s.server === 'product' && want(s.name))
          scenarios.push({ ...s, name: `pg:${s.name}`, label: `${s.label} (PG)`, server: 'product-pg' });
      }
    }
    const serverOf = (s: { server: string }) =>
      s.server === 'bare' ? bare : s.server === 'product-pg' ? productPg! : product;
    const results = new Map<string, LoadResult[]>(scenarios.map((s) => [s.name, []]));
    const rss = new Map<string, number>();
    if (opts.warmup) {
      // JIT, statement caches and connection pools warm before anything is recorded
      console.log(`\nwarm-up: ${opts.warmup} s per scenario`);
      for (const s of scenarios) {
        if (s.name.startsWith('mcp-get-me') && mcpSkip) continue;
        await runLoad(serverOf(s).baseUrl, s.target, { seconds: opts.warmup, connections: opts.connections });
      }
    }
    product.takeWindowPeak();
    productPg?.takeWindowPeak();
    for (let round = 1; round <= opts.rounds; round++) {
      console.log(`\nround ${round}/${opts.rounds}  (load average ${loadavg()})`);
      for (const s of scenarios) {
        if (s.name.startsWith('mcp-get-me') && mcpSkip) continue;
        const server = serverOf(s);
        const cpu0 = server.cpuMs();
        const r = await runLoad(server.baseUrl, s.target, { seconds: opts.seconds, connections: opts.connections });
        r.cpuUsPerRequest = r.total ? ((server.cpuMs() - cpu0) * 1000) / r.total : undefined;
        results.get(s.name)!.push(r);
        if (s.server !== 'bare') rss.set(s.name, Math.max(rss.get(s.name) ?? 0, server.takeWindowPeak()));
        const bad = r.failures ? `  (${r.failures} failed: ${JSON.stringify(r.statusCodes)})` : '';
        const cpu = r.cpuUsPerRequest === undefined ? '' : `  server CPU ${r.cpuUsPerRequest.toFixed(0)} µs/request`;
        console.log(
          `  ${s.label.padEnd(32)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${cpu}${bad}`,
        );
      }
    }
    const rows: ScenarioRow[] = scenarios.map((s) => {
      const rs = results.get(s.name)!;
      if (s.name.startsWith('mcp-get-me') && mcpSkip)
        return { name: s.name, label: s.label, skipped: `skipped: ${mcpSkip}` };
      return {
        name: s.name,
        label: s.label,
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        failures: rs.reduce((n, r) => n + r.failures, 0),
        rssPeak: rss.get(s.name),
        cpuUsPerRequest: median(rs.map((r) => r.cpuUsPerRequest ?? 0)),
      };
    });

    let latency: WebhookFigures | string | null = null;
    let fanout: WebhookFigures | string | null = null;
    if (want('webhooks')) {
      latency = webhookSkip;
      fanout = webhookSkip;
      if (receiver) {
        console.log(`\nwebhooks: 200 events/s to 1 webhook for ${opts.seconds} s`);
        latency = await measureWebhooks(receiver, {
          baseUrl: product.baseUrl,
          apiKey: world.apiKey,
          roomId: world.latencyRoomId,
          hooks: [0],
          rate: 200,
          seconds: opts.seconds,
          connections: opts.connections,
          drainLimitSeconds: 60,
        });
        const hooks = Array.from({ length: opts.webhookFanout }, (_, i) => i + 1);
        console.log(
          `webhooks: ${opts.webhookRate} events/s to ${hooks.length} webhooks (${opts.webhookRate * hooks.length} deliveries/s offered) for ${opts.seconds} s`,
        );
        fanout = await measureWebhooks(receiver, {
          baseUrl: product.baseUrl,
          apiKey: world.apiKey,
          roomId: world.fanoutRoomId,
          hooks,
          rate: opts.webhookRate,
          seconds: opts.seconds,
          connections: opts.connections,
          drainLimitSeconds: 120,
        });
        if (receiver.rejected) console.log(`  WARNING: ${receiver.rejected} deliveries failed signature verification`);
        console.log(
          `  ${receiver.standardVerified.toLocaleString('en')} deliveries also verified with the standardwebhooks library (webhook-id, webhook-timestamp, webhook-signature)`,
        );
      }
      rss.set('webhooks', product.takeWindowPeak());
    }

    if (want('subscriptions')) {
      // MCP subscriptions/listen: one stream on a room while its messages are posted at 200 events/s
      console.log(
        `\nsubscriptions: 200 events/s to a room watched by one MCP subscriptions/listen stream for ${opts.seconds} s`,
      );
      const f = await measureSubscriptions({
        baseUrl: product.baseUrl,
        apiKey: world.apiKey,
        roomId: world.latencyRoomId,
        rate: 200,
        seconds: opts.seconds,
        connections: opts.connections,
      });
      const verdict = f.notified >= f.events && f.p99 < 2000 ? 'PASS' : 'FAIL';
      console.log(
        `  ${f.events} writes (${f.postedPerSecond.toFixed(0)}/s), ${f.notified} notifications; 201-to-notification p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms, max ${f.max.toFixed(0)} ms  [${verdict}: every write notified, p99 < 2 s]`,
      );
    }

    const report = printReport({
      rows,
      latency,
      fanout,
      rssPeak: product.peakRss(),
      bareRssPeak: bare.peakRss(),
      webhookRss: rss.get('webhooks'),
      pgRssPeak: productPg?.peakRss(),
    });
    if (opts.jsonFile) fs.writeFileSync(opts.jsonFile, JSON.stringify({ options: opts, ...report }, null, 2));
    console.log(
      `\nproduct server RSS peak ${mb(product.peakRss())}, bare server ${mb(bare.peakRss())}; load average now ${loadavg()}`,
    );
  } finally {
    await stopAll();
    await receiver?.close();
    await pgDb?.drop().catch((e: Error) => console.error(`could not drop the bench database: ${e.message}`));
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
