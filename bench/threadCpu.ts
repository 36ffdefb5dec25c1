// `npx tsx bench/threadCpu.ts [scenario …]`: where a request's CPU is spent by thread and by mode. Starts the product
// as `npm start` does, drives each scenario for BENCH_SECONDS (default 6) after BENCH_WARMUP, and prints per request
// the CPU of the main thread (user and kernel apart), of V8's helper threads (the scavenger's and the marker's
// parallel work, the compiler) and of libuv's pool, from /proc/<pid>/task/*/stat. A `--cpu-prof` profile sees only the
// main thread's JavaScript and native calls, so a gap between two scenarios that /proc shows and a profile does not is
// in the kernel (system calls: socket reads and writes, epoll) or in another thread; this says which.
// BENCH_NODE_FLAGS: node flags to add before the start script's own (`--cpu-prof`, say, to see what the profiler
// itself changes). BENCH_ROUNDS (default 1) repeats the list, alternating the scenarios, and ends with each one's
// least and median.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchNodeFlags, readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
import { productScenarios } from './httpScenarios.js';
import { median, runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Clock ticks (1/100 s on Linux) of every thread of a process, by group: user and system time apart. */
type Ticks = Record<string, { user: number; system: number }>;

/** A thread's group by its name: the main thread carries the process's name (`node`, or MainThread on newer Node). */
function groupOf(name: string, tid: number, pid: number): string {
  if (tid === pid) return 'main thread';
  if (name.startsWith('V8')) return 'V8 helpers';
  if (name.startsWith('libuv')) return 'libuv pool';
  return 'other threads';
}

export function ticksOf(pid: number): Ticks {
  const out: Ticks = {};
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const g = (out[groupOf(name, Number(tid), pid)] ??= { user: 0, system: 0 });
    g.user += Number(fields[11]);
    g.system += Number(fields[12]);
  }
  return out;
}

async function main(): Promise<void> {
  const opts = readBenchOptions({ BENCH_SECONDS: '6', BENCH_ROUNDS: '1', ...process.env });
  const names = process.argv.slice(2).length ? process.argv.slice(2) : ['me', 'mcp-get-me', 'list-1k'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-threads-'));
  const port = await freePort();
  const env = productEnv(dir, port);
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const scenarios = productScenarios(world, env.SVC_SECRET, names);
  const flags = benchNodeFlags();
  const server = await startChildServer({
    name: 'product',
    args: [...flags, ...productArgs(ROOT)],
    env,
    port,
    cwd: ROOT,
  });
  const groups = ['main thread', 'V8 helpers', 'libuv pool', 'other threads'];
  try {
    console.log(
      `svc CPU by thread: ${opts.seconds} s per scenario, ${opts.connections} connections, µs per request (user / system)`,
    );
    console.log(`  ${'scenario'.padEnd(32)} ${'req/s'.padStart(6)}  ${groups.map((g) => g.padStart(17)).join(' ')}`);
    for (const name of opts.warmup ? names : []) {
      const scenario = scenarios.find((s) => s.name === name)!;
      await runLoad(server.baseUrl, scenario.target, { seconds: opts.warmup, connections: opts.connections });
    }
    const totals = new Map<string, number[]>();
    for (let round = 0; round < opts.rounds; round++)
      for (const name of names) {
        const scenario = scenarios.find((s) => s.name === name)!;
        const before = ticksOf(server.pid);
        const r = await runLoad(server.baseUrl, scenario.target, {
          seconds: opts.seconds,
          connections: opts.connections,
        });
        const after = ticksOf(server.pid);
        const n = r.rps * opts.seconds;
        // a tick is 10 ms: µs per request = ticks * 10,000 / requests
        const per = (g: string, k: 'user' | 'system') => (((after[g]?.[k] ?? 0) - (before[g]?.[k] ?? 0)) * 10_000) / n;
        console.log(
          `  ${scenario.label.padEnd(32)} ${r.rps.toFixed(0).padStart(6)}  ` +
            groups.map((g) => `${per(g, 'user').toFixed(0)} / ${per(g, 'system').toFixed(0)}`.padStart(17)).join(' '),
        );
        const total = groups.reduce((sum, g) => sum + per(g, 'user') + per(g, 'system'), 0);
        totals.set(name, [...(totals.get(name) ?? []), total]);
      }
    // the machine's neighbours only ever add time: the least of many short rounds is the cost on a quiet machine
    console.log('\n  every thread, µs per request: least and median of the rounds');
    for (const [name, t] of totals) {
      const label = scenarios.find((s) => s.name === name)!.label;
      const [least, mid] = [Math.min(...t), median(t)].map((v) => v.toFixed(0).padStart(4));
      console.log(`  ${label.padEnd(32)} least ${least}  median ${mid}`);
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
