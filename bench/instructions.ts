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
// Needs valgrind (Debian's package); the server runs many times slower under it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchNodeFlags, int, readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
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

/** The instructions (Ir) of the newest dump in `dir`, from its `summary:` or `totals:` line. */
function newestDumpIr(dir: string, seen: Set<string>): number {
  const fresh = fs.readdirSync(dir).filter((f) => f.startsWith('callgrind.out') && !seen.has(f));
  if (fresh.length !== 1) throw new Error(`expected one new callgrind dump in ${dir}, found ${fresh.length}`);
  seen.add(fresh[0]);
  const text = fs.readFileSync(path.join(dir, fresh[0]), 'utf8');
  const line = /^(?:summary|totals):\s*(\d+)/m.exec(text);
  if (!line) throw new Error(`no summary line in ${fresh[0]}`);
  return Number(line[1]);
}

async function main(): Promise<void> {
  const opts = readBenchOptions(process.env);
  // BENCH_CHECKOUT: another checkout's product (node_modules linked), measured as this one would be
  const checkout = path.resolve(process.env.BENCH_CHECKOUT ?? ROOT);
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
  const server = await startChildServer({
    name: 'product',
    wrapper: [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${path.join(dumps, 'callgrind.out')}`,
    ],
    args: [...benchNodeFlags(), ...productArgs(checkout)],
    env,
    port,
    cwd: checkout,
    readyTimeoutMs: 600_000,
  });
  const counts = new Map<string, number[]>(names.map((n) => [n, []]));
  // (the file named by --callgrind-out-file stays empty: each dump gets a number after it)
  const seen = new Set<string>(['callgrind.out']);
  const drive = (name: string, amount: number) =>
    runLoad(server.baseUrl, scenarios.get(name)!.target, { seconds: 0, amount, connections: opts.connections });
  try {
    for (const name of names) {
      const r = await drive(name, warmup);
      console.log(`warm-up ${scenarios.get(name)!.label}: ${r.total} requests, ${r.failures} not 2xx`);
    }
    control('-i=on', server.pid, env);
    // one unmeasured pass with the counts on: valgrind translates the code again, and anything left to compile is
    for (const name of names) await drive(name, requests);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const name of names) {
        const scenario = scenarios.get(name)!;
        control('-z', server.pid, env);
        const r = await drive(name, requests);
        control('-d', server.pid, env);
        const ir = newestDumpIr(dumps, seen);
        if (r.failures) throw new Error(`${scenario.label}: ${r.failures} of ${r.total} requests were not 2xx`);
        counts.get(name)!.push(ir / r.total);
        console.log(`  round ${round} ${scenario.label.padEnd(32)} ${(ir / r.total / 1000).toFixed(1)} k instructions`);
      }
    }
  } finally {
    await server.stop();
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
  console.log(
    `\ninstructions a request, thousands (${opts.rounds} rounds x ${requests} requests, ${opts.connections} connections)`,
  );
  for (const name of names) {
    const xs = counts.get(name)!;
    const label = scenarios.get(name)!.label;
    const k = (x: number) => (x / 1000).toFixed(1).padStart(7);
    console.log(
      `  ${label.padEnd(36)} median ${k(median(xs))}  least ${k(Math.min(...xs))}  most ${k(Math.max(...xs))}`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
