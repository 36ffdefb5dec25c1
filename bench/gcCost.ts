// `npx tsx bench/gcCost.ts [scenario …]`: what the garbage collector costs each request of a bench scenario
// (default: me, list-1k, mcp-get-me, mcp-list-messages). Starts the product as `npm start` does, with
// bench/gcProbe.mjs preloaded (and BENCH_NODE_FLAGS, space-separated V8 flags to try, before the start
// script's own), drives each scenario for BENCH_SECONDS (default 6) after BENCH_WARMUP, and prints per
// request: server CPU, scavenges (µs, and requests between two), the old generation's growth seen after
// scavenges (promoted or allocated there directly: what later needs a mark-compact), and mark-compacts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchNodeFlags, readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
import { productScenarios } from './httpScenarios.js';
import { runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface GcTotals {
  scavenge: { n: number; ms: number };
  markCompact: { n: number; ms: number };
  oldGrowth: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const opts = readBenchOptions({ BENCH_SECONDS: '6', ...process.env });
  const names = process.argv.slice(2).length
    ? process.argv.slice(2)
    : ['me', 'list-1k', 'mcp-get-me', 'mcp-list-messages'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-gc-'));
  const probeFile = path.join(dir, 'gc.json');
  const port = await freePort();
  const env = productEnv(dir, port, { GC_PROBE_OUT: probeFile });
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const scenarios = productScenarios(world, env.SVC_SECRET, names);
  const flags = benchNodeFlags();
  const server = await startChildServer({
    name: 'product',
    args: ['--import', path.join(ROOT, 'bench/gcProbe.mjs'), ...flags, ...productArgs(ROOT)],
    env,
    port,
    cwd: ROOT,
  });
  const totals = (): GcTotals => JSON.parse(fs.readFileSync(probeFile, 'utf8')) as GcTotals;
  try {
    console.log(
      `svc gc cost: ${opts.seconds} s per scenario, ${opts.connections} connections${flags.length ? `, node flags ${flags.join(' ')}` : ''}`,
    );
    console.log(
      '  scenario                          req/s  CPU µs/req  scavenge µs/req  req/scavenge  old growth B/req  mark-compacts',
    );
    for (const name of names) {
      const scenario = scenarios.find((s) => s.name === name)!;
      if (opts.warmup)
        await runLoad(server.baseUrl, scenario.target, { seconds: opts.warmup, connections: opts.connections });
      await pause(300);
      const before = totals();
      const cpu0 = server.cpuMs();
      const r = await runLoad(server.baseUrl, scenario.target, {
        seconds: opts.seconds,
        connections: opts.connections,
      });
      const cpu = server.cpuMs() - cpu0;
      await pause(300);
      const after = totals();
      const n = r.rps * opts.seconds;
      const scavenges = after.scavenge.n - before.scavenge.n;
      console.log(
        `  ${scenario.label.padEnd(32)} ${r.rps.toFixed(0).padStart(6)} ${((cpu * 1000) / n).toFixed(0).padStart(11)}` +
          ` ${(((after.scavenge.ms - before.scavenge.ms) * 1000) / n).toFixed(1).padStart(16)} ${(n / Math.max(1, scavenges)).toFixed(0).padStart(13)}` +
          ` ${((after.oldGrowth - before.oldGrowth) / n).toFixed(0).padStart(17)} ${String(after.markCompact.n - before.markCompact.n).padStart(14)}`,
      );
    }
  } finally {
    await server.stop();
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
