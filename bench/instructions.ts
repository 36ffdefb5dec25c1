// `npx tsx bench/instructions.ts [scenario …]`: the instructions a request costs, counted instead of timed.
// Starts the product as `npm start` does, under valgrind's callgrind with its counting off while the server starts
// and warms up: each scenario is driven BENCH_WARMUP_REQUESTS times (default 20,000), then once more with the
// counting on. Then, for each of BENCH_ROUNDS rounds (default 3) and each scenario in turn, the counts are zeroed,
// BENCH_REQUESTS requests are sent (default 2,000; BENCH_CONNECTIONS at once, default 10) and the counts are dumped.
// Prints each scenario's instructions a request: every thread of the process (V8's compiler and collector threads
// included), user space only (the kernel is not counted). A count does not move with the machine's load or its
// other core, where CPU time does; what it cannot see is what a cache miss or a system call costs, which time does.
// A major collection that falls inside a round moves that round's count by up to a third: read the least of
// several rounds, and trust only differences well above the rounds' spread.
// - `name@v` scenarios send `X-Bench-Variant: v` (bench/httpScenarios.ts), for a scratch A/B in one process. Paths
//   that alternate in one process deoptimize each other's code, so such an A/B reads noisier than two processes.
// - BENCH_CHECKOUT=<dir> measures another checkout's product (its node_modules linked), for a before and after.
// - BENCH_SERVER=limit or limit-db measures the limit of the same work (bench/limit/limitServer.ts; limit-db commits
//   the window and the units as svc must) on the same seeded file, for the scenarios it serves (me, list-1k,
//   mcp-get-me, mcp-get-me-2026).
// - BENCH_MAIN_THREAD=1 counts the main thread alone (callgrind's --separate-threads): the JavaScript, the event
//   loop, SQLite, and the collector's work on that thread, without V8's helper threads (concurrent marking, sweeping,
//   optimizing compiles), whose work falls into one round or the next by time rather than by request.
// - BENCH_CACHE_SIM=1 has callgrind simulate the caches too (its own model: 32 KB first-level caches for code and
//   for data, one last level): the first-level misses a request, for code (I1) and data read and written (D1), and
//   the last level's (LL), beside the instructions. Equal counts of instructions can take unequal time; misses are
//   one part of why (see bench/README.md, 30 Nov 2026).
// - BENCH_BRANCH_SIM=1 has it simulate branch prediction: the conditional and indirect branches mispredicted a request.
// Needs valgrind (Debian's package); the server runs many times slower under it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchNodeFlags, int, readBenchOptions } from './benchOptions.js';
import {
  freePort,
  limitServerOptions,
  productArgs,
  productEnv,
  startChildServer,
  type StartChildOptions,
} from './childServer.js';
import { productScenarios } from './httpScenarios.js';
import { median, runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs `callgrind_control <flag> <pid>`. It reaches the process through valgrind's gdbserver, by files named after
 * the user and the `HOST` of the process's environment (the server's bind address here), so it is given the same.
 */
const control = (flag: string, pid: number, env: Record<string, string>) =>
  execFileSync('callgrind_control', [flag, String(pid)], { stdio: 'pipe', env });

/** The events read from a dump: instructions (Ir); the misses, with the cache simulation; the mispredicted branches. */
const EVENTS = ['Ir', 'I1mr', 'D1mr', 'D1mw', 'ILmr', 'DLmr', 'DLmw', 'Bcm', 'Bim'] as const;
type Counts = Record<(typeof EVENTS)[number], number>;

/**
 * The counts of the newest dump in `dir`, from its `summary:` or `totals:` line in the order of its `events:`. With
 * `mainOnly` (callgrind's `--separate-threads=yes`, one file a thread, `-01` the first), the main thread's file alone.
 */
function newestDumpCounts(dir: string, seen: Set<string>, mainOnly: boolean): Counts {
  const fresh = fs.readdirSync(dir).filter((f) => f.startsWith('callgrind.out') && !seen.has(f));
  for (const f of fresh) seen.add(f);
  const wanted = mainOnly ? fresh.filter((f) => f.endsWith('-01')) : fresh;
  if (wanted.length !== 1) throw new Error(`expected one new callgrind dump in ${dir}, found ${fresh.join(', ')}`);
  return dumpCounts(fs.readFileSync(path.join(dir, wanted[0]), 'utf8'), wanted[0]);
}

/** A dump's totals by event name (an event the dump does not count reads 0). */
export function dumpCounts(text: string, name: string): Counts {
  const events = /^events:\s*(.+)$/m.exec(text)?.[1].trim().split(/\s+/);
  const line = /^(?:summary|totals):[ \t]*([\d \t]+)$/m.exec(text);
  if (!events || !line) throw new Error(`no events or summary line in ${name}`);
  const values = line[1].trim().split(/\s+/).map(Number);
  return Object.fromEntries(EVENTS.map((e) => [e, values[events.indexOf(e)] ?? 0])) as Counts;
}

/** The misses of the first level (code, data read, data written) and of the last level, summed. */
const firstLevel = (c: Counts) => c.I1mr + c.D1mr + c.D1mw;
const lastLevel = (c: Counts) => c.ILmr + c.DLmr + c.DLmw;

async function main(): Promise<void> {
  const opts = readBenchOptions(process.env);
  // BENCH_CHECKOUT: another checkout's product (node_modules linked), measured as this one would be
  const checkout = path.resolve(process.env.BENCH_CHECKOUT ?? ROOT);
  const which = process.env.BENCH_SERVER ?? 'svc';
  if (!['svc', 'limit', 'limit-db'].includes(which))
    throw new Error(`BENCH_SERVER: svc, limit or limit-db, not ${which}`);
  const cacheSim = process.env.BENCH_CACHE_SIM === '1';
  const mainOnly = process.env.BENCH_MAIN_THREAD === '1';
  const branchSim = process.env.BENCH_BRANCH_SIM === '1';
  const requests = int(process.env, 'BENCH_REQUESTS', 2000);
  const warmup = int(process.env, 'BENCH_WARMUP_REQUESTS', 20_000);
  const names = process.argv.slice(2).length ? process.argv.slice(2) : ['me', 'mcp-get-me', 'list-1k'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-instructions-'));
  const dumps = path.join(dir, 'dumps');
  fs.mkdirSync(dumps);
  const port = await freePort();
  // (set here, npm start's entry does not replace itself to set it, which would leave valgrind behind)
  const env = productEnv(dir, port, { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' });
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const scenarios = new Map(productScenarios(world, env.SVC_SECRET, names).map((s) => [s.name, s]));
  const served: StartChildOptions =
    which === 'svc'
      ? { name: 'product', args: [...benchNodeFlags(), ...productArgs(checkout)], env, port, cwd: checkout }
      : limitServerOptions({
          name: which,
          root: checkout,
          env,
          port,
          file: path.join(dir, 'svc.sqlite'),
          countsInDb: which === 'limit-db',
        });
  const server = await startChildServer({
    ...served,
    wrapper: [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      ...(cacheSim ? ['--cache-sim=yes'] : []),
      ...(mainOnly ? ['--separate-threads=yes'] : []),
      ...(branchSim ? ['--branch-sim=yes'] : []),
      `--callgrind-out-file=${path.join(dumps, 'callgrind.out')}`,
    ],
    readyTimeoutMs: 600_000,
  });
  const counts = new Map<string, Counts[]>(names.map((n) => [n, []]));
  // what the simulations add to a line: the misses and the mispredicted branches a request
  const simulated = (c: Counts) =>
    (cacheSim ? `, misses ${missText(c)}` : '') + (branchSim ? `, ${branchText(c)}` : '');
  // (the file named by --callgrind-out-file stays empty: each dump gets a number after it)
  const seen = new Set<string>(['callgrind.out']);
  const drive = (name: string, amount: number) =>
    runLoad(server.baseUrl, scenarios.get(name)!.target, { seconds: 0, amount, connections: opts.connections });
  try {
    for (const name of names) {
      const r = await drive(name, warmup);
      console.log(`warm-up ${scenarios.get(name)!.label}: ${r.total} requests, ${r.failures} not 2xx`);
    }
    control('-i=on', server.pid, served.env);
    // one unmeasured pass with the counts on: valgrind translates the code again, and anything left to compile is
    for (const name of names) await drive(name, requests);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const name of names) {
        const scenario = scenarios.get(name)!;
        control('-z', server.pid, served.env);
        const r = await drive(name, requests);
        control('-d', server.pid, served.env);
        const c = newestDumpCounts(dumps, seen, mainOnly);
        if (r.failures) throw new Error(`${scenario.label}: ${r.failures} of ${r.total} requests were not 2xx`);
        const per = Object.fromEntries(EVENTS.map((e) => [e, c[e] / r.total])) as Counts;
        counts.get(name)!.push(per);
        console.log(
          `  round ${round} ${scenario.label.padEnd(32)} ${(per.Ir / 1000).toFixed(1)} k instructions${simulated(per)}`,
        );
      }
    }
  } finally {
    await server.stop();
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
  console.log(
    `\n${which}: instructions a request, thousands (${opts.rounds} rounds x ${requests} requests, ` +
      `${opts.connections} connections)${cacheSim || branchSim ? '; the least round, its misses a request' : ''}`,
  );
  for (const name of names) {
    const rounds = counts.get(name)!;
    const xs = rounds.map((c) => c.Ir);
    const label = scenarios.get(name)!.label;
    const k = (x: number) => (x / 1000).toFixed(1).padStart(7);
    const least = rounds[xs.indexOf(Math.min(...xs))];
    console.log(
      `  ${label.padEnd(36)} median ${k(median(xs))}  least ${k(least.Ir)}  most ${k(Math.max(...xs))}` +
        simulated(least),
    );
  }
}

/** A request's mispredicted branches: conditional, and indirect (calls and jumps through a register). */
const branchText = (c: Counts) => `mispredicted branches ${Math.round(c.Bcm)} + indirect ${Math.round(c.Bim)}`;

/** A request's misses: first level for code and data, last level, and an estimate of cycles. */
function missText(c: Counts): string {
  // (KCachegrind's weights for its cycle estimate: an instruction a cycle, 10 a first-level miss, 100 a last-level
  // one; its 10 a mispredicted branch left out, so that runs with and without the branch simulation compare)
  const cycles = c.Ir + 10 * firstLevel(c) + 100 * lastLevel(c);
  return (
    `I1 ${Math.round(c.I1mr)} D1 ${Math.round(c.D1mr + c.D1mw)} LL ${Math.round(lastLevel(c))}` +
    ` (est. ${(cycles / 1000).toFixed(0)} k cycles)`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
