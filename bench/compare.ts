// `npx tsx bench/compare.ts <other checkout>`: before/after on one machine at one time. Starts the product
// of another checkout (for example a copy with the previous version of some files, node_modules linked)
// and the product of this tree, each on a database of its own, and drives them alternately, scenario by
// scenario and round by round, so both see the same neighbours. Prints medians and the after/before ratio.
// Each side's server is started BENCH_PROCESSES times (default 3), BENCH_ROUNDS rounds each: one process of a
// build can run a quarter faster or slower than the next for its whole life, which one pair could not tell from
// the change.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer, type ChildServer } from './childServer.js';
import { httpScenarios, type HttpScenario } from './httpScenarios.js';
import { median, roundRatios, runLoad } from './runLoad.js';
import { provisionBenchPostgres, seedBench, type BenchWorld } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_SCENARIOS = ['me', 'rooms', 'post-message', 'mcp-get-me'];

interface Side {
  label: string;
  dir: string;
  server: ChildServer;
  /** What starts its server again: a new process on the same data. */
  restart(): Promise<void>;
  scenarios: HttpScenario[];
  rps: Map<string, number[]>;
  p50: Map<string, number[]>;
  cpu: Map<string, number[]>;
  /** Highest server RSS seen during the measured rounds, in bytes. */
  rss: number;
  /** Its PostgreSQL database (BENCH_DATABASE_URL), dropped at the end. */
  pg: { drop(): Promise<void> } | null;
}

async function startSide(label: string, cwd: string, names: string[]): Promise<Side> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-compare-${label}-`));
  const port = await freePort();
  const pg = process.env.BENCH_DATABASE_URL ? await provisionBenchPostgres(process.env.BENCH_DATABASE_URL) : null;
  const env = productEnv(dir, port, pg ? { DATABASE_URL: pg.url } : {});
  const world: BenchWorld = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const args = productArgs(cwd);
  const start = () => startChildServer({ name: label, args, env, port, cwd });
  const scenarios = httpScenarios(world, env.SVC_SECRET).filter((s) => names.includes(s.name));
  const side: Side = {
    label,
    dir,
    server: await start(),
    async restart() {
      this.rss = Math.max(this.rss, this.server.takeWindowPeak());
      await this.server.stop();
      this.server = await start();
    },
    scenarios,
    rps: new Map(),
    p50: new Map(),
    cpu: new Map(),
    rss: 0,
    pg,
  };
  return side;
}

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other || !fs.existsSync(path.join(other, 'src/main.ts')))
    throw new Error('usage: npx tsx bench/compare.ts <checkout with src/main.ts>');
  const opts = readBenchOptions();
  const names = opts.only.length ? opts.only : DEFAULT_SCENARIOS;
  const sides = [await startSide('before', path.resolve(other), names), await startSide('after', ROOT, names)];
  try {
    // One process of the same build runs persistently faster or slower than another, by up to a quarter on this
    // machine (the same tree against itself read 74–83 % in every round of one run): so each side's server is started
    // BENCH_PROCESSES times, and the rounds of every pair of processes count alike.
    const processes = Number(process.env.BENCH_PROCESSES ?? 3);
    const total = processes * opts.rounds;
    let round = 0;
    for (let p = 1; p <= processes; p++) {
      // (a new pair of processes, started in turn in the other order each time)
      if (p > 1) for (const side of p % 2 ? sides : [...sides].reverse()) await side.restart();
      for (const side of sides) side.server.takeWindowPeak();
      for (const side of opts.warmup ? sides : []) {
        for (const s of side.scenarios)
          await runLoad(side.server.baseUrl, s.target, { seconds: opts.warmup, connections: opts.connections });
      }
      for (let r = 1; r <= opts.rounds; r++) {
        round++;
        console.log(
          `round ${round}/${total}, processes ${p}/${processes}  (load average ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')})`,
        );
        for (const name of names) {
          // alternate which side goes first, so neither always runs on the warmer machine
          for (const side of r % 2 ? sides : [...sides].reverse()) {
            const s = side.scenarios.find((x) => x.name === name);
            if (!s) continue;
            const cpu0 = side.server.cpuMs();
            const load = await runLoad(side.server.baseUrl, s.target, {
              seconds: opts.seconds,
              connections: opts.connections,
            });
            const cpuUs = load.total ? ((side.server.cpuMs() - cpu0) * 1000) / load.total : 0;
            side.rps.set(name, [...(side.rps.get(name) ?? []), load.rps]);
            side.p50.set(name, [...(side.p50.get(name) ?? []), load.p50]);
            side.cpu.set(name, [...(side.cpu.get(name) ?? []), cpuUs]);
            side.rss = Math.max(side.rss, side.server.takeWindowPeak());
            console.log(
              `  ${side.label.padEnd(7)} ${s.label.padEnd(30)} ${load.rps.toFixed(0).padStart(6)} req/s  p50 ${load.p50} ms  p99 ${load.p99} ms  CPU ${cpuUs.toFixed(0)} µs/request${load.failures ? `  ${load.failures} failed` : ''}`,
            );
          }
        }
      }
    }
    console.log('\nmedians');
    for (const name of names) {
      const [b, a] = sides.map((s) => median(s.rps.get(name) ?? []));
      const [bp, ap] = sides.map((s) => median(s.p50.get(name) ?? []));
      const [bc, ac] = sides.map((s) => median(s.cpu.get(name) ?? []));
      console.log(
        `  ${name.padEnd(14)} before ${b.toFixed(0).padStart(6)} req/s (p50 ${bp} ms, CPU ${bc.toFixed(0)} µs)   ` +
          `after ${a.toFixed(0).padStart(6)} req/s (p50 ${ap} ms, CPU ${ac.toFixed(0)} µs)   ${((a / b) * 100).toFixed(0)}% req/s, ${((ac / bc) * 100).toFixed(0)}% CPU`,
      );
      const perRound = (m: (s: Side) => Map<string, number[]>) => {
        const [bs, as] = sides.map((s) => m(s).get(name) ?? []);
        return roundRatios(as, bs);
      };
      // the machine's neighbours only ever add time: each side's least CPU per request is its cost on a quiet machine
      const [bl, al] = sides.map((s) => Math.min(...(s.cpu.get(name) ?? [])));
      console.log(
        `  ${''.padEnd(14)} least CPU per request: before ${bl.toFixed(0)} µs, after ${al.toFixed(0)} µs, ${((al / bl) * 100).toFixed(0)}%`,
      );
      const r = perRound((s) => s.rps);
      console.log(
        `  ${''.padEnd(14)} median of the rounds' own ratios: ${(median(r) * 100).toFixed(0)}% req/s ` +
          `(${r.map((x) => (x * 100).toFixed(0)).join(', ')}), ${(median(perRound((s) => s.cpu)) * 100).toFixed(0)}% CPU`,
      );
    }
    console.log(
      `  server RSS peak during the rounds: ${sides.map((s) => `${s.label} ${(s.rss / 1024 / 1024).toFixed(0)} MB`).join(', ')}`,
    );
  } finally {
    await Promise.all(sides.map((s) => s.server.stop()));
    for (const s of sides) fs.rmSync(s.dir, { recursive: true, force: true });
    for (const s of sides)
      await s.pg?.drop().catch((e: Error) => console.error(`could not drop the ${s.label} database: ${e.message}`));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
