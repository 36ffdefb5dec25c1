// `npx tsx bench/profileDiff.ts <a.cpuprofile> <a req/s> <b.cpuprofile> <b req/s> [seconds]`: two CPU profiles
// written by bench/profile.ts, side by side in µs of CPU per request served (self time, by area and by function),
// the largest differences first. Profiles of two scenarios (MCP `get_me` against `GET /v1/me`, say) show what one
// costs beyond the other; two versions of one scenario, what a change moved. Each profile is read over its last
// `seconds` (default BENCH_SECONDS or 10) + 1.5 s, as profile.ts reads it: the measured load and the shutdown.
// The req/s are the ones profile.ts printed for each run.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { areaOf, frameKey, type CpuProfile } from './profile.js';

/** µs of self time per request, by function and by area, idle time left out. */
export function perRequest(p: CpuProfile, requests: number, windowMs: number) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const at: number[] = [];
  p.timeDeltas.reduce((t, d, i) => (at[i] = t + d / 1000), 0);
  const from = (at[at.length - 1] ?? 0) - windowMs;
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    if (at[i] < from || n.callFrame.functionName === '(idle)') return;
    const us = (p.timeDeltas[i] ?? 0) / requests;
    add(self, frameKey(n), us);
    add(areas, areaOf(n.callFrame.url, n.callFrame.functionName), us);
  });
  return { self, areas };
}

function main(): void {
  const [a, aRps, b, bRps, secondsArg] = process.argv.slice(2);
  if (!a || !b || !Number(aRps) || !Number(bRps)) {
    throw new Error('usage: npx tsx bench/profileDiff.ts <a.cpuprofile> <a req/s> <b.cpuprofile> <b req/s> [seconds]');
  }
  const seconds = Number(secondsArg) || readBenchOptions().seconds;
  const load = (file: string, rps: string) =>
    perRequest(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(rps) * seconds, seconds * 1000 + 1500);
  const A = load(a, aRps);
  const B = load(b, bRps);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  console.log(
    `µs of CPU per request (self time, idle left out): a ${sum(A.self).toFixed(1)}, b ${sum(B.self).toFixed(1)}`,
  );
  for (const [title, ma, mb, n] of [
    ['by area', A.areas, B.areas, 15],
    ['by function', A.self, B.self, 40],
  ] as const) {
    const rows = [...new Set([...ma.keys(), ...mb.keys()])].map((k) => ({ k, a: ma.get(k) ?? 0, b: mb.get(k) ?? 0 }));
    rows.sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a));
    console.log(`\n${title}:       a       b     b-a`);
    for (const r of rows.slice(0, n))
      console.log(
        `${r.a.toFixed(1).padStart(8)}${r.b.toFixed(1).padStart(8)}${(r.b - r.a).toFixed(1).padStart(8)}  ${r.k}`,
      );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main();
