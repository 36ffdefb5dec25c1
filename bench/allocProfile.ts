// `npx tsx bench/allocProfile.ts [scenario]`: what one request of a bench scenario allocates, and where (default
// `me`). Starts the product as `npm start` does with bench/allocProbe.mjs preloaded (V8's sampling heap profiler,
// collected objects included), drives the scenario for BENCH_SECONDS after a warm-up, and prints the bytes
// allocated per request by allocating function (self) and by package, and inclusive bytes of the project's own
// functions. Garbage is what the scavenger pays for: the fewer bytes a request allocates, the rarer the scavenges.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
import { httpScenarios } from './httpScenarios.js';
import { areaOf, frameKey } from './profile.js';
import { runLoad } from './runLoad.js';
import { seedBench } from './seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface HeapNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}
interface HeapProfile {
  head: HeapNode;
  samples: { size: number; nodeId: number; ordinal: number }[];
}

/** Bytes by allocating frame, by area, and inclusive bytes by frame, from the samples (each counted at its size). */
export function summarizeAllocations(p: HeapProfile) {
  const byId = new Map<number, { node: HeapNode; parent?: number }>();
  const walk = (n: HeapNode, parent?: number) => {
    byId.set(n.id, { node: n, parent });
    for (const c of n.children) walk(c, n.id);
  };
  walk(p.head);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  for (const s of p.samples) {
    const e = byId.get(s.nodeId);
    if (!e) continue;
    total += s.size;
    const k = frameKey(e.node);
    self.set(k, (self.get(k) ?? 0) + s.size);
    const a = areaOf(e.node.callFrame.url, e.node.callFrame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + s.size);
    const seen = new Set<string>();
    for (let cur: number | undefined = s.nodeId; cur !== undefined; cur = byId.get(cur)?.parent) {
      const ck = frameKey(byId.get(cur)!.node);
      if (!seen.has(ck)) {
        seen.add(ck);
        incl.set(ck, (incl.get(ck) ?? 0) + s.size);
      }
    }
  }
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n);
  return { total, self: top(self, 40), areas: top(areas, 20), inclusive: top(incl, 60) };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const opts = readBenchOptions({ BENCH_SECONDS: '4', ...process.env });
  const name = process.argv[2] ?? 'me';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-alloc-'));
  const out = path.join(dir, 'alloc.heapprofile');
  const port = await freePort();
  const env = productEnv(dir, port, { ALLOC_PROBE_OUT: out });
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 60, webhooks: null });
  const scenario = httpScenarios(world, env.SVC_SECRET).find((x) => x.name === name && x.server === 'product');
  if (!scenario) throw new Error(`unknown scenario ${name}`);
  const server = await startChildServer({
    name: 'product',
    args: ['--import', path.join(ROOT, 'bench/allocProbe.mjs'), ...productArgs(ROOT)],
    env,
    port,
    cwd: ROOT,
  });
  let requests = 0;
  try {
    // the profile covers the warm-up too: its requests are counted as well (both runs are the same scenario)
    const warm = await runLoad(server.baseUrl, scenario.target, {
      seconds: opts.warmup || 2,
      connections: opts.connections,
    });
    const measured = await runLoad(server.baseUrl, scenario.target, {
      seconds: opts.seconds,
      connections: opts.connections,
    });
    requests = warm.total + measured.total;
    process.kill(server.pid, 'SIGUSR2');
    for (let i = 0; i < 100 && !fs.existsSync(out); i++) await pause(100);
  } finally {
    await server.stop();
  }
  if (!fs.existsSync(out)) throw new Error('no heap profile written');
  const s = summarizeAllocations(JSON.parse(fs.readFileSync(out, 'utf8')) as HeapProfile);
  console.log(`${scenario.label}: profile ${out}`);
  const line = ([k, b]: [string, number]) =>
    `  ${(b / requests).toFixed(0).padStart(8)} B/req ${((b / s.total) * 100).toFixed(1).padStart(5)}%  ${k}`;
  console.log(
    `${(s.total / requests / 1024).toFixed(1)} KB allocated per request (${requests} requests, start-up included)`,
  );
  console.log('\nby area');
  s.areas.forEach((e) => console.log(line(e)));
  console.log('\nby allocating function');
  s.self.forEach((e) => console.log(line(e)));
  console.log('\ninclusive');
  s.inclusive.forEach((e) => console.log(line(e)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
