// `npx tsx bench/profile.ts [scenario]`: runs the product under `node --cpu-prof`, drives one scenario of
// the bench (default `me`: GET /v1/me; also rooms, post-message, mcp-get-me, list-1k …, or `webhooks`: the
// fan-out, posting BENCH_WEBHOOK_RATE events/s to BENCH_WEBHOOK_FANOUT webhooks until delivered) with
// autocannon, stops it, and prints where the CPU went: self time by function and by package, and inclusive
// time of the project's own functions. The .cpuprofile is kept for DevTools. With
// BENCH_DATABASE_URL, the product runs on a PostgreSQL database of its own there (as `npm run bench` does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from './benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer } from './childServer.js';
import { httpScenarios } from './httpScenarios.js';
import { runLoad } from './runLoad.js';
import { provisionBenchPostgres, seedBench } from './seedBench.js';
import { measureWebhooks } from './webhookBench.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame belongs: a package, the project's own code (by area), node internals, or V8 pseudo-frames. */
export function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return 'node:*';
  const own = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
  return own
    .split('/')
    .slice(0, own.startsWith('src/') ? 2 : 1)
    .join('/');
}

export const frameKey = (n: Pick<ProfileNode, 'callFrame'>) => {
  const url = n.callFrame.url
    .replace(/^file:\/\//, '')
    .replace(`${ROOT}/`, '')
    .replace(/^.*node_modules\//, '~/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
};

/**
 * Self and inclusive milliseconds per frame and self milliseconds per area, over the last `windowMs` of the
 * profile (the measured load and the shutdown, not the start-up).
 */
export function summarizeProfile(p: CpuProfile, windowMs = Infinity) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  const at: number[] = [];
  p.timeDeltas.reduce((t, d, i) => (at[i] = t + d / 1000), 0);
  const from = (at[at.length - 1] ?? 0) - windowMs;
  p.samples.forEach((id, i) => {
    if (at[i] < from) return;
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    const n = byId.get(id)!;
    total += ms;
    self.set(frameKey(n), (self.get(frameKey(n)) ?? 0) + ms);
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frameKey(byId.get(cur)!);
      if (!seen.has(k)) {
        seen.add(k);
        incl.set(k, (incl.get(k) ?? 0) + ms);
      }
    }
  });
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n);
  return {
    total,
    self: top(self, 30),
    areas: top(areas, 25),
    ownInclusive: top(incl, 40, (k) => / (src|rest|mcp|db)\//.test(k)),
    inclusive: top(incl, 60),
  };
}

async function main(): Promise<void> {
  const opts = readBenchOptions();
  const name = process.argv[2] ?? 'me';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-profile-'));
  const profDir = path.join(dir, 'prof');
  const port = await freePort();
  // BENCH_DATABASE_URL: the product on a PostgreSQL database of its own (seeded the same way, dropped at the end)
  const pgDb = process.env.BENCH_DATABASE_URL ? await provisionBenchPostgres(process.env.BENCH_DATABASE_URL) : null;
  const env = productEnv(dir, port, {
    SVC_WORKER: name === 'webhooks' ? 'on' : 'off',
    SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
    ...(pgDb && { DATABASE_URL: pgDb.url }),
  });
  const receiver: WebhookReceiver | null = name === 'webhooks' ? await startWebhookReceiver() : null;
  const world = await seedBench({
    env,
    largeMessages: 1001,
    extraRooms: 60,
    webhooks: receiver ? { urlFor: receiver.urlFor, fanout: opts.webhookFanout } : null,
  });
  for (const [hook, secret] of world.webhookSecrets ?? [])
    receiver!.setSecret(hook, secret, world.webhookStandardSecrets?.get(hook));
  const scenario = httpScenarios(world, env.SVC_SECRET).find((x) => x.name === name && x.server === 'product');
  if (!scenario && !receiver) throw new Error(`unknown scenario ${name}`);
  const server = await startChildServer({
    // npm start's node flags, but the sources through tsx, so that the profile names our files and lines
    name: 'product',
    // (PROFILE_BUNDLE=1: exactly npm start's entry and bundle instead; frames then name .build/main.mjs lines)
    args:
      process.env.PROFILE_BUNDLE === '1'
        ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, ...productArgs(ROOT)]
        : [
            '--cpu-prof',
            `--cpu-prof-dir=${profDir}`,
            '--import',
            'tsx',
            ...productArgs(ROOT).map((a) => (a === 'scripts/serve.mjs' ? 'src/main.ts' : a)),
          ],
    env,
    port,
    cwd: ROOT,
  });
  let windowMs = opts.seconds * 1000 + 1500;
  try {
    if (receiver) {
      const started = Date.now();
      const f = await measureWebhooks(receiver, {
        baseUrl: server.baseUrl,
        apiKey: world.apiKey,
        roomId: world.fanoutRoomId,
        rate: opts.webhookRate,
        seconds: opts.seconds,
        connections: opts.connections,
        drainLimitSeconds: 120,
        hooks: Array.from({ length: opts.webhookFanout }, (_, i) => i + 1),
      });
      windowMs = Date.now() - started + 1500;
      console.log(
        `webhooks: ${f.delivered}/${f.expected} delivered, ${f.deliveriesPerSecond.toFixed(0)} deliveries/s, p99 ${f.p99.toFixed(0)} ms under the profiler`,
      );
    } else {
      // warm up, then measure under the profiler
      await runLoad(server.baseUrl, scenario!.target, { seconds: 3, connections: opts.connections });
      const r = await runLoad(server.baseUrl, scenario!.target, {
        seconds: opts.seconds,
        connections: opts.connections,
      });
      console.log(
        `${scenario!.label}: ${r.rps.toFixed(0)} req/s under the profiler, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failures} failed`,
      );
    }
  } finally {
    await server.stop();
    await receiver?.close();
    await pgDb?.drop().catch((e: Error) => console.error(`could not drop the profile database: ${e.message}`));
  }
  const file = fs
    .readdirSync(profDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(profDir, f))[0];
  if (!file) throw new Error('no .cpuprofile written');
  const s = summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, windowMs);
  const line = ([k, ms]: [string, number]) =>
    `  ${ms.toFixed(0).padStart(7)} ms ${((ms / s.total) * 100).toFixed(1).padStart(5)}%  ${k}`;
  console.log(`\nprofile ${file} (last ${(s.total / 1000).toFixed(1)} s: the measured load and the shutdown)`);
  console.log('\nself time by area');
  s.areas.forEach((e) => console.log(line(e)));
  console.log('\nself time by function');
  s.self.forEach((e) => console.log(line(e)));
  console.log('\ninclusive time, project code');
  s.ownInclusive.forEach((e) => console.log(line(e)));
  if (process.env.PROFILE_ALL) {
    console.log('\ninclusive time, everything');
    s.inclusive.forEach((e) => console.log(line(e)));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
