// `npx tsx bench/stageCuts.ts`, with bench/stageCuts.patch applied (`git apply bench/stageCuts.patch`, and `git apply
// -R bench/stageCuts.patch` after): what each stage of a request costs, by answering it early. The patch
// adds named points to the request path (the MCP door, the credential, the body, the message, the scopes, the tool
// call, the result; the pipeline's steps for both surfaces; REST's procedure call) where a request whose `X-Cut`
// header names the point is answered `{}` at once. One product process (as `npm start` starts it) is driven with each
// `scenario:point` of CUTS in turn (an empty point: the whole request), BENCH_ROUNDS rounds of BENCH_SECONDS (defaults
// 20 x 1 s), and each prints its least and median CPU a request (every thread, /proc/<pid>/task). The points of one
// process share its speed (a process keeps its own for life: bench/README.md), which the profiler's figures do not:
// one point's cost is the difference between two. Never commit the patch applied: it answers without an audit row. The
// patch gives the limit (bench/limit/limitServer.ts) points of the same names where it does the same step (`door`,
// `body`, `cred`, `msg`, `r-pre`, `p-auth`, `p-charge`, `p-next`, `result`, `p-audit`); a scenario written `limit/me`
// or `limit-db/me` (its counts committed, `LIMIT_COUNTS=db`) drives a limit process of its own, on a copy of the same
// seeded file, alternating with svc's in the same rounds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import {
  type ChildServer,
  freePort,
  limitServerOptions,
  productArgs,
  productEnv,
  startChildServer,
} from './childServer.js';
import { productScenarios } from './httpScenarios.js';
import { median, runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';
import { ticksOf } from './threadCpu.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_CUTS = [
  ...['me', 'limit/me', 'limit-db/me'].flatMap((s) =>
    ['r-pre', 'p-auth', 'p-charge', 'p-next', 'p-audit', ''].map((p) => `${s}:${p}`),
  ),
  ...['door', 'cred', 'body', 'msg', 'preinvoke', 'p-next', 'p-audit', 'invoke', 'result', ''].map(
    (p) => `mcp-get-me:${p}`,
  ),
  ...['door', 'body', 'cred', 'msg', 'p-charge', 'p-next', 'result', 'p-audit', ''].map((p) => `limit/mcp-get-me:${p}`),
].join(',');

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
  const specs = (process.env.CUTS ?? DEFAULT_CUTS).split(',');
  const servers = new Map<string, ChildServer>();
  const costs = new Map<string, number[]>();
  // answers that were not 2xx (a limit that does not take the request, say): such a figure is not the step's cost
  const failed = new Map<string, number>();
  try {
    // the limits' copies of the seeded file are made before svc opens it
    const limits = [...new Set(specs.flatMap((spec) => (spec.includes('/') ? [spec.split('/')[0]] : [])))];
    for (const name of limits) {
      if (name !== 'limit' && name !== 'limit-db') throw new Error(`unknown server ${name} (limit or limit-db)`);
      fs.copyFileSync(path.join(dir, 'svc.sqlite'), path.join(dir, `${name}.sqlite`));
    }
    servers.set('svc', await startChildServer({ name: 'svc', args: productArgs(ROOT), env, port, cwd: ROOT }));
    for (const name of limits) {
      const file = path.join(dir, `${name}.sqlite`);
      const options = { name, root: ROOT, env, port: await freePort(), file, countsInDb: name === 'limit-db' };
      servers.set(name, await startChildServer(limitServerOptions(options)));
    }
    const targets = specs.map((spec) => {
      const [scenario, point] = spec.split(':');
      const [serverName, name] = scenario.includes('/') ? scenario.split('/') : ['svc', scenario];
      // the limit answers svc's requests, URLs included (its base URL is only in its challenges)
      const { target } = productScenarios(world, env.SVC_SECRET, [name])[0];
      const server = servers.get(serverName)!;
      return { spec, server, target: point ? { ...target, headers: { ...target.headers, 'x-cut': point } } : target };
    });
    for (const t of targets)
      await runLoad(t.server.baseUrl, t.target, { seconds: opts.warmup, connections: opts.connections });
    for (let round = 0; round < opts.rounds; round++)
      for (const t of targets) {
        const before = allTicksOf(t.server.pid);
        const r = await runLoad(t.server.baseUrl, t.target, { seconds: opts.seconds, connections: opts.connections });
        // a tick is 10 ms: µs per request = ticks * 10,000 / requests
        const us = ((allTicksOf(t.server.pid) - before) * 10_000) / (r.rps * opts.seconds);
        costs.set(t.spec, [...(costs.get(t.spec) ?? []), us]);
        if (r.failures) failed.set(t.spec, (failed.get(t.spec) ?? 0) + r.failures);
      }
  } finally {
    for (const server of servers.values()) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`CPU µs a request, answered at each point (${opts.rounds} rounds x ${opts.seconds} s, least and median)`);
  for (const [spec, us] of costs)
    console.log(
      `  ${spec.padEnd(30)} least ${Math.min(...us)
        .toFixed(0)
        .padStart(4)}  median ${median(us).toFixed(0).padStart(4)}${
        failed.has(spec) ? `  (${failed.get(spec)} answers not 2xx: not a clean figure)` : ''
      }`,
    );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
