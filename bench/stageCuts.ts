// `npx tsx bench/stageCuts.ts`, with bench/stageCuts.patch applied (`git apply bench/stageCuts.patch`, and
// `git checkout -- src mcp rest` after): what each stage of a request costs, by answering it early. The patch adds
// named points to the request path (the MCP door, the credential, the body, the message, the scopes, the tool call,
// the result; the pipeline's steps for both surfaces; REST's procedure call) where a request whose `X-Cut` header
// names the point is answered `{}` at once. One product process (as `npm start` starts it) is driven with each
// `scenario:point` of CUTS in turn (an empty point: the whole request), BENCH_ROUNDS rounds of BENCH_SECONDS
// (defaults 20 x 1 s), and each prints its least and median CPU a request (every thread, /proc/<pid>/task). The
// points of one process share its speed (a process keeps its own for life: bench/README.md), which the profiler's
// figures do not: one point's cost is the difference between two. Never commit the patch applied: it answers
// without an audit row.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
import { productScenarios } from './httpScenarios.js';
import { median, runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';
import { ticksOf } from './threadCpu.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_CUTS =
  'me:r-pre,me:p-auth,me:p-charge,me:p-next,me:p-audit,me:,' +
  'mcp-get-me:door,mcp-get-me:cred,mcp-get-me:body,mcp-get-me:msg,mcp-get-me:preinvoke,mcp-get-me:p-next,' +
  'mcp-get-me:p-audit,mcp-get-me:invoke,mcp-get-me:result,mcp-get-me:';

/** Clock ticks (user and system) of every thread of a process. */
const allTicksOf = (pid: number): number => Object.values(ticksOf(pid)).reduce((sum, t) => sum + t.user + t.system, 0);

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'mcp/transport/_cut.ts')))
    throw new Error('bench/stageCuts.patch is not applied (git apply bench/stageCuts.patch)');
  const opts = readBenchOptions({ BENCH_SECONDS: '1', BENCH_ROUNDS: '20', BENCH_CONNECTIONS: '50', ...process.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cuts-'));
  const port = await freePort();
  const env = productEnv(dir, port);
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const targets = (process.env.CUTS ?? DEFAULT_CUTS).split(',').map((spec) => {
    const [name, point] = spec.split(':');
    const { target } = productScenarios(world, env.SVC_SECRET, [name])[0];
    return { spec, target: point ? { ...target, headers: { ...target.headers, 'x-cut': point } } : target };
  });
  const server = await startChildServer({ name: 'product', args: productArgs(ROOT), env, port, cwd: ROOT });
  const costs = new Map<string, number[]>();
  try {
    for (const t of targets)
      await runLoad(server.baseUrl, t.target, { seconds: opts.warmup, connections: opts.connections });
    for (let round = 0; round < opts.rounds; round++)
      for (const t of targets) {
        const before = allTicksOf(server.pid);
        const r = await runLoad(server.baseUrl, t.target, { seconds: opts.seconds, connections: opts.connections });
        // a tick is 10 ms: µs per request = ticks * 10,000 / requests
        const us = ((allTicksOf(server.pid) - before) * 10_000) / (r.rps * opts.seconds);
        costs.set(t.spec, [...(costs.get(t.spec) ?? []), us]);
      }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`CPU µs a request, answered at each point (${opts.rounds} rounds x ${opts.seconds} s, least and median)`);
  for (const [spec, us] of costs)
    console.log(
      `  ${spec.padEnd(24)} least ${Math.min(...us)
        .toFixed(0)
        .padStart(4)}  median ${median(us).toFixed(0).padStart(4)}`,
    );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
