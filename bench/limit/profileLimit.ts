// `npx tsx bench/limit/profileLimit.ts [me|page]`: where a request's CPU goes in svc and in the limit of the same work
// (bench/limit/limitServer.ts). Both run under `node --cpu-prof` on copies of one seeded file, each driven for
// BENCH_SECONDS (50 connections unless BENCH_CONNECTIONS) after a warm-up; every sample of the measured window is
// put in the stage of the innermost frame of its stack that belongs to one, and each stage's CPU is divided by the
// requests answered. Prints both columns and keeps the .cpuprofile files (for Chrome DevTools). With
// `LIMIT_COUNTS=db` the limit is the one that commits the window and the units in the database (limitServer.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../benchOptions.js';
import { freePort, productArgs, productEnv, startChildServer, type ChildServer } from '../childServer.js';
import { frameKey, type CpuProfile } from '../profile.js';
import { runLoad, type LoadTarget } from '../runLoad.js';
import { seedBench } from '../seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The stages, in the order of the table, each with the frames that belong to it (`frameKey`: function, file and
 * line, node_modules as `~/`). A sample goes to the innermost frame of its stack that matches one, so a statement
 * counts for the step that ran it (`db/sql.ts` and better-sqlite3 frames belong to none), and the writes run by
 * the group commit for it.
 */
const STAGES: [string, RegExp][] = [
  ['socket writes (kernel)', /^(writeUtf8String|writev|writeBuffer|writeLatin1String) /],
  ['GC', /^\(garbage collector\)/],
  [
    'audit row',
    /^(auditCall|recordAudit|auditValues|writeAudit|insertAudit|auditRow) |^(audit|answer|writeAudit) bench\/limit/,
  ],
  ['database writes: group commit', /^(flushWrites|queueWrite) db\/sql|^flush bench\/limit/],
  [
    'rate limit (60 s window)',
    /^(consume|count|countAddress|recordRate) src\/(fastpaths|auth)|^(count|countInDb) bench\/limit/,
  ],
  [
    'units (month)',
    /^(chargeUnits|charge|requireUnits|recordBalance|recordUnchargedBalance|refundIfNothingDone) |^charge bench\/limit/,
  ],
  [
    'credential (key by hash, live, billing entity)',
    /^(authenticateApiKey|authenticate|authenticateRequest|presentedToken|touchLastUsed|safeEqual|sha256Hex) |^authenticate bench\/limit/,
  ],
  ['scopes', /^authorize src\/auth/],
  ['query (room access, page)', /^(listMessages|requireRoom|keysetRows|orgRole) |^page bench\/limit/],
  [
    'validation (zod, input bounds)',
    /~\/zod\/|^(unacceptableInput|inputValidatorMiddleware|outputValidatorMiddleware) /,
  ],
  ['procedure call (tRPC, handler)', /~\/@trpc\/|src\/procedures\/|src\/fastpaths\/invokeProcedure/],
  [
    'rendering (JSON, envelope, cursor)',
    /^(sendJson|sendError|errorEnvelope|toMessage|encodeCursor|stringify) |^cursorOf /,
  ],
  ['headers', /^(restHeaders|outcomeHeaders|mergeHeaders|writeHead|setHeader|_storeHeader|processHeader) |^send bench/],
  [
    'parsing, routing (HTTP, express, REST adapter)',
    /node:_http|~\/express\/|~\/router\/|rest\/|src\/app\.ts|^handle bench/,
  ],
];
const OTHER = 'other (Node internals, event loop, native)';

function stagesOf(p: CpuProfile, windowMs: number): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, string>();
  const stageOf = (id: number): string => {
    let s = stageOfNode.get(id);
    if (s) return s;
    const n = byId.get(id)!;
    if (n.callFrame.functionName === '(idle)') s = '(idle)';
    else {
      const key = frameKey(n);
      s = STAGES.find(([, re]) => re.test(key))?.[0];
      if (!s) s = parent.has(id) ? stageOf(parent.get(id)!) : OTHER;
    }
    stageOfNode.set(id, s);
    return s;
  };
  const at: number[] = [];
  p.timeDeltas.reduce((t, d, i) => (at[i] = t + d / 1000), 0);
  const from = (at[at.length - 1] ?? 0) - windowMs;
  const out = new Map<string, number>();
  p.samples.forEach((id, i) => {
    if (at[i] < from) return;
    const s = stageOf(id);
    out.set(s, (out.get(s) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

async function profiled(o: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  target: LoadTarget;
  seconds: number;
  warmup: number;
  connections: number;
  profDir: string;
}): Promise<{ stages: Map<string, number>; requests: number; rps: number; file: string }> {
  const dir = path.join(o.profDir, o.name);
  const server: ChildServer = await startChildServer({
    name: o.name,
    args: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...o.args],
    env: o.env,
    port: o.port,
    cwd: ROOT,
  });
  try {
    await runLoad(server.baseUrl, o.target, { seconds: o.warmup, connections: o.connections });
    const started = Date.now();
    const r = await runLoad(server.baseUrl, o.target, { seconds: o.seconds, connections: o.connections });
    const windowMs = Date.now() - started + 500;
    await server.stop();
    const file = path.join(
      dir,
      fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!,
    );
    const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
    return { stages: stagesOf(p, windowMs), requests: r.total, rps: r.rps, file };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'me';
  if (scenario !== 'me' && scenario !== 'page') throw new Error('usage: bench/limit/profileLimit.ts [me|page]');
  const opts = readBenchOptions();
  const connections = process.env.BENCH_CONNECTIONS ? opts.connections : 50;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-limit-profile-'));
  const [svcPort, limitPort] = [await freePort(), await freePort()];
  const env = productEnv(dir, svcPort);
  const world = await seedBench({ env, largeMessages: 1001, extraRooms: 0, webhooks: null });
  const svcFile = path.join(dir, 'svc.sqlite');
  const limitFile = path.join(dir, 'limit.sqlite');
  fs.copyFileSync(svcFile, limitFile);
  const target: LoadTarget = {
    method: 'GET',
    path: scenario === 'me' ? '/v1/me' : `/v1/rooms/${world.smallRoomId}/messages?limit=50`,
    headers: { authorization: `Bearer ${world.apiKey}` },
  };
  const common = { target, seconds: opts.seconds, warmup: Math.max(opts.warmup, 2), connections, profDir: dir };
  const load0 = os.loadavg()[0];
  // the servers one after the other: a profiler's own cost would otherwise fall on the other's rounds
  // npm start's node flags, the sources through tsx, so that the frames name our files (as bench/profile.ts)
  const svcArgs = ['--import', 'tsx', ...productArgs(ROOT).map((a) => (a === 'scripts/serve.mjs' ? 'src/main.ts' : a))];
  const svc = await profiled({ ...common, name: 'svc', args: svcArgs, env, port: svcPort });
  const limit = await profiled({
    ...common,
    name: 'limit',
    args: ['--import', 'tsx', 'bench/limit/limitServer.ts'],
    env: {
      ...env,
      PORT: String(limitPort),
      BASE_URL: `http://127.0.0.1:${limitPort}`,
      DATABASE_URL: `sqlite:${limitFile}`,
    },
    port: limitPort,
  });
  const load1 = os.loadavg()[0];
  console.log(
    `${target.path}: svc ${svc.rps.toFixed(0)} req/s, limit ${limit.rps.toFixed(0)} req/s under the profiler, ` +
      `${connections} connections, ${opts.seconds} s each; load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`,
  );
  const names = [...STAGES.map(([n]) => n), 'database writes: group commit', OTHER];
  const us = (m: Map<string, number>, n: string, requests: number) => ((m.get(n) ?? 0) * 1000) / requests;
  console.log(`\n| Stage | svc µs/request | limit µs/request |\n|---|---:|---:|`);
  let [ts, tl] = [0, 0];
  for (const n of [...new Set(names)]) {
    const [a, b] = [us(svc.stages, n, svc.requests), us(limit.stages, n, limit.requests)];
    ts += a;
    tl += b;
    console.log(`| ${n} | ${a.toFixed(1)} | ${b.toFixed(1)} |`);
  }
  console.log(`| **total CPU** | **${ts.toFixed(0)}** | **${tl.toFixed(0)}** |`);
  console.log(`\nprofiles: ${svc.file}\n          ${limit.file}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
