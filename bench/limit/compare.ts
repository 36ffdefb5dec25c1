// `npx tsx bench/limit/compare.ts` (also `npm run bench`, scenario `limit`): svc against the limit of the same work
// (bench/limit/limitServer.ts), twice: with the 60 s window and the month's units in memory (one process), and with
// them committed in the same SQLite file by svc's statements (`LIMIT_COUNTS=db`, as svc must keep them, shared by
// every process). Seeds one SQLite file the bench's way, gives each server a copy of it, checks that both limits
// answer svc's bytes to a set of requests (statuses, header names and values, bodies, the audit rows they write),
// then drives the three in turn, round after round, with autocannon: `GET /v1/me`, the first page of 50 messages
// and MCP `tools/call get_me` on both revisions. Prints req/s, the server's CPU per request and the ratios to each
// limit, MCP's to REST on each server and the CPU MCP spends above REST on each, with the load average. Exits
// non-zero only when it could not run or the answers differ.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { newId } from '../../src/domain/ids.js';
import { sha256Hex } from '../../src/domain/hashing.js';
import { readBenchOptions, type BenchOptions } from '../benchOptions.js';
import {
  freePort,
  limitServerOptions,
  productArgs,
  productEnv,
  startChildServer,
  type ChildServer,
} from '../childServer.js';
import { MCP_2026_GET_ME_BODY, MCP_GET_ME_BODY, mcp2026Headers, mcpHeaders } from '../httpScenarios.js';
import { median, roundRatios, runLoad, type LoadTarget } from '../runLoad.js';
import { seedBench, type BenchWorld } from '../seedBench.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** A key of the same user holding `me:read` only: the missing-scope refusal. */
function insertNarrowKey(file: string, w: BenchWorld): string {
  const token = `svc_test_${randomBytes(32).toString('base64url')}`;
  const db = new Database(file);
  db.prepare(
    'INSERT INTO "api_keys" ("id", "userId", "organizationId", "name", "mode", "scopes", "tokenHash", "prefix", ' +
      '"last4", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    newId('key'),
    w.userId,
    w.organizationId,
    'narrow',
    'test',
    JSON.stringify(['me:read']),
    sha256Hex(token),
    'svc_test_',
    token.slice(-4),
    new Date().toISOString(),
  );
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return token;
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** One request, its answer with the header names in the order sent and the values that vary evened out. */
function ask(baseUrl: string, p: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? 'GET' : 'POST';
    const req = http.request(baseUrl + p, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const out: [string, string][] = [];
        const raw = res.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) {
          const [k, v] = [raw[i], raw[i + 1]];
          if (k === 'Date' || k === 'Keep-Alive' || k === 'Connection') continue;
          // the window's reset counts down in seconds: equal within one
          out.push([k, k === 'RateLimit-Reset' ? 'n' : v.replaceAll(baseUrl, '<base>')]);
        }
        const body = Buffer.concat(chunks).toString('utf8').replaceAll(baseUrl, '<base>');
        resolve({ status: res.statusCode ?? 0, headers: out, body });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const AUDIT_COLUMNS =
  '"requestId", "surface", "method", "routePattern", "statusCode", "authMethod", "actor", "delegatingUserId", ' +
  '"scopes", "organizationId", "userId", "apiKeyId", "tokenId", "units", "errorCode", "agentRunId"';

function auditRows(file: string, requestIds: string[]): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    const get = db.prepare(`SELECT ${AUDIT_COLUMNS} FROM "audit_log" WHERE "requestId" = ?`);
    return requestIds.map((id) => get.all(id));
  } finally {
    db.close();
  }
}

/**
 * The same requests to svc and to each limit, one at a time and in the same order (each on a copy of the same file,
 * so the same counts): every answer and every audit row of a limit must equal svc's. Returns the differences.
 */
async function checkSameAnswers(
  svc: { server: ChildServer; file: string },
  limits: { name: string; server: ChildServer; file: string }[],
  w: BenchWorld,
  narrowKey: string,
): Promise<string[]> {
  const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
  const page = `/v1/rooms/${w.smallRoomId}/messages?limit=50`;
  const requests: [string, Record<string, string>, string?][] = [
    ['/v1/me', bearer(w.apiKey)],
    [page, bearer(w.apiKey)],
    ['/v1/me', { 'x-api-key': w.apiKey }],
    [`/v1/rooms/${w.smallRoomId}/messages?limit=20`, bearer(w.apiKey)],
    ['/v1/me', bearer('svc_test_not-a-key')],
    ['/v1/me', {}],
    [page, bearer(narrowKey)],
    ['/v1/me', bearer(narrowKey)],
    [`/v1/rooms/room_01JZ00000000000000000000ZZ/messages?limit=50`, bearer(w.apiKey)],
    [`/v1/rooms/${w.largeRoomId}/messages?limit=50`, bearer(w.apiKey)],
    // MCP tools/call get_me on both revisions, and the door's two refusals
    ['/mcp', mcpHeaders(w.apiKey), MCP_GET_ME_BODY],
    ['/mcp', mcp2026Headers(w.apiKey), MCP_2026_GET_ME_BODY],
    ['/mcp', mcpHeaders('svc_test_not-a-key'), MCP_GET_ME_BODY],
    ['/mcp', mcpHeaders(narrowKey), MCP_GET_ME_BODY],
  ];
  const diffs: string[] = [];
  const ids: string[] = [];
  let cursorPath: string | undefined;
  for (let i = 0; i <= requests.length; i++) {
    // last: the second page, through the first page's cursor
    const [p, h, body] = i < requests.length ? requests[i] : [cursorPath!, bearer(w.apiKey)];
    const requestId = `limit-check-${i}-${randomBytes(4).toString('hex')}`;
    ids.push(requestId);
    const a = await ask(svc.server.baseUrl, p, { ...h, 'x-request-id': requestId }, body);
    const label = `${body === undefined ? '' : 'POST '}${p} (${Object.keys(h).join(', ') || 'no credential'})`;
    for (const limit of limits) {
      const b = await ask(limit.server.baseUrl, p, { ...h, 'x-request-id': requestId }, body);
      const who = `${label} [${limit.name}]`;
      if (a.status !== b.status) diffs.push(`${who}: status ${a.status} (svc) vs ${b.status} (limit)`);
      if (JSON.stringify(a.headers) !== JSON.stringify(b.headers))
        diffs.push(`${who}: headers\n    svc   ${JSON.stringify(a.headers)}\n    limit ${JSON.stringify(b.headers)}`);
      if (a.body !== b.body)
        diffs.push(`${who}: body\n    svc   ${a.body.slice(0, 400)}\n    limit ${b.body.slice(0, 400)}`);
    }
    if (i === 1) {
      const next = (JSON.parse(a.body) as { nextCursor: string }).nextCursor;
      cursorPath = `${page}&cursor=${encodeURIComponent(next)}`;
    }
  }
  const ra = auditRows(svc.file, ids);
  ids.forEach((id, i) => {
    if ((ra[i] as unknown[]).length !== 1) diffs.push(`svc wrote ${(ra[i] as unknown[]).length} audit rows for ${id}`);
  });
  for (const limit of limits) {
    const rb = auditRows(limit.file, ids);
    ids.forEach((id, i) => {
      const [x, y] = [JSON.stringify(ra[i]), JSON.stringify(rb[i])];
      if (x !== y) diffs.push(`audit row of ${id} [${limit.name}]\n    svc   ${x}\n    limit ${y}`);
    });
  }
  console.log(
    `  ${ids.length} requests to svc and ${limits.map((l) => l.name).join(' and ')}, ${ids.length} audit rows ` +
      `compared: ${diffs.length ? 'DIFFERENT' : 'identical'}`,
  );
  return diffs;
}

/** A server of the comparison, and what starts it again (a new process on the same file). */
interface Proc {
  server: ChildServer;
  restart(): Promise<void>;
}

async function startProc(start: () => Promise<ChildServer>): Promise<Proc> {
  const proc: Proc = {
    server: await start(),
    async restart() {
      await proc.server.stop();
      proc.server = await start();
    },
  };
  return proc;
}

/** Runs the check and the alternating rounds; returns the medians (req/s, CPU µs per request) by scenario. */
export async function measureLimit(opts: BenchOptions): Promise<Record<string, { rps: number; cpuUs: number }>> {
  const connections = process.env.BENCH_CONNECTIONS ? opts.connections : 50;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-limit-'));
  const servers: Proc[] = [];
  try {
    const [svcPort, limitPort, limitDbPort] = [await freePort(), await freePort(), await freePort()];
    const env = productEnv(dir, svcPort);
    console.log(`\nthe limit of the same work (bench/limit): seeding, ${connections} connections`);
    const world = await seedBench({ env, largeMessages: 1001, extraRooms: 0, webhooks: null });
    const svcFile = path.join(dir, 'svc.sqlite');
    const narrowKey = insertNarrowKey(svcFile, world);
    const limitFile = path.join(dir, 'limit.sqlite');
    const limitDbFile = path.join(dir, 'limit-db.sqlite');
    fs.copyFileSync(svcFile, limitFile);
    fs.copyFileSync(svcFile, limitDbFile);
    const svcArgs = productArgs(ROOT);
    const svc = await startProc(() => startChildServer({ name: 'svc', args: svcArgs, env, port: svcPort, cwd: ROOT }));
    servers.push(svc);
    const startLimit = async (name: string, file: string, port: number, countsInDb: boolean) => {
      const server = await startProc(() =>
        startChildServer(limitServerOptions({ name, root: ROOT, env, port, file, countsInDb })),
      );
      servers.push(server);
      return server;
    };
    const limit = await startLimit('limit', limitFile, limitPort, false);
    const limitDb = await startLimit('limit-db', limitDbFile, limitDbPort, true);

    const diffs = await checkSameAnswers(
      { server: svc.server, file: svcFile },
      [
        { name: 'limit', server: limit.server, file: limitFile },
        { name: 'limit-db', server: limitDb.server, file: limitDbFile },
      ],
      world,
      narrowKey,
    );
    if (diffs.length) {
      for (const d of diffs) console.log(`  DIFFERENT: ${d}`);
      throw new Error('svc and the limit do not answer the same bytes: not measured');
    }

    const auth = { authorization: `Bearer ${world.apiKey}` };
    const me: LoadTarget = { method: 'GET', path: '/v1/me', headers: auth };
    const firstPage: LoadTarget = {
      method: 'GET',
      path: `/v1/rooms/${world.smallRoomId}/messages?limit=50`,
      headers: auth,
    };
    type Scenario = { name: string; label: string; on: Proc; target: LoadTarget };
    // one group per request: the two limits and svc, in an order that turns each round
    const groups: Scenario[][] = [
      [
        { name: 'limit-me', label: 'limit GET /v1/me', on: limit, target: me },
        { name: 'limit-db-me', label: 'limit (counts in db) GET /v1/me', on: limitDb, target: me },
        { name: 'me', label: 'svc GET /v1/me', on: svc, target: me },
      ],
      [
        { name: 'limit-page', label: 'limit messages, page of 50', on: limit, target: firstPage },
        { name: 'limit-db-page', label: 'limit (counts in db) page of 50', on: limitDb, target: firstPage },
        { name: 'page', label: 'svc messages, page of 50', on: svc, target: firstPage },
      ],
      ...(
        [
          ['', 'MCP 2025', { method: 'POST', path: '/mcp', headers: mcpHeaders(world.apiKey), body: MCP_GET_ME_BODY }],
          [
            '-2026',
            'MCP 2026',
            { method: 'POST', path: '/mcp', headers: mcp2026Headers(world.apiKey), body: MCP_2026_GET_ME_BODY },
          ],
        ] as const
      ).map(([suffix, label, target]): Scenario[] => [
        { name: `limit-mcp${suffix}`, label: `limit ${label} get_me`, on: limit, target },
        { name: `limit-db-mcp${suffix}`, label: `limit (counts in db) ${label} get_me`, on: limitDb, target },
        { name: `mcp-get-me${suffix}`, label: `svc ${label} tools/call get_me`, on: svc, target },
      ]),
    ];
    const scenarios = groups.flat();
    const rps = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    // One process of a server can run a quarter faster or slower than the next for its whole life (bench/README.md):
    // every server is started BENCH_PROCESSES times (default 2), BENCH_ROUNDS rounds each, and all rounds count alike.
    const processes = Number(process.env.BENCH_PROCESSES ?? 2);
    const total = processes * opts.rounds;
    let round = 0;
    for (let p = 1; p <= processes; p++) {
      if (p > 1) for (const proc of p % 2 ? servers : [...servers].reverse()) await proc.restart();
      if (opts.warmup)
        for (const s of scenarios) await runLoad(s.on.server.baseUrl, s.target, { seconds: opts.warmup, connections });
      for (let k = 1; k <= opts.rounds; k++) {
        round++;
        console.log(`  round ${round}/${total}, processes ${p}/${processes}  (load average ${loadavg()})`);
        // the servers of a group take turns going first, so none always runs on the warmer machine
        const order = groups.flatMap((g) => g.map((_, i) => g[(i + round - 1) % g.length]));
        for (const s of order) {
          const c0 = s.on.server.cpuMs();
          const r = await runLoad(s.on.server.baseUrl, s.target, { seconds: opts.seconds, connections });
          const us = r.total ? ((s.on.server.cpuMs() - c0) * 1000) / r.total : 0;
          rps.set(s.name, [...(rps.get(s.name) ?? []), r.rps]);
          cpu.set(s.name, [...(cpu.get(s.name) ?? []), us]);
          const bad = r.failures ? `  ${r.failures} failed ${JSON.stringify(r.statusCodes)}` : '';
          console.log(
            `    ${s.label.padEnd(34)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${us.toFixed(0)} µs/request${bad}`,
          );
        }
      }
    }
    const m = Object.fromEntries(
      scenarios.map((s) => [s.name, { rps: median(rps.get(s.name)!), cpuUs: median(cpu.get(s.name)!) }]),
    );
    const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)} %`;
    console.log(`  medians of ${total} rounds, ${processes} processes of each server (load average now ${loadavg()}):`);
    // svc against each limit (0.75), then MCP's share of REST on svc (the 0.85) and on each limit (what a bare
    // server doing MCP's extra work keeps)
    for (const [a, b, target] of [
      ['me', 'limit-me', 0.75],
      ['me', 'limit-db-me', 0.75],
      ['page', 'limit-page', 0.75],
      ['page', 'limit-db-page', 0.75],
      ['mcp-get-me', 'limit-mcp', 0.75],
      ['mcp-get-me', 'limit-db-mcp', 0.75],
      ['mcp-get-me-2026', 'limit-mcp-2026', 0.75],
      ['mcp-get-me-2026', 'limit-db-mcp-2026', 0.75],
      ['mcp-get-me', 'me', 0.85],
      ['mcp-get-me-2026', 'me', 0.85],
      ['limit-mcp', 'limit-me', 0.85],
      ['limit-db-mcp', 'limit-db-me', 0.85],
      ['limit-db-mcp-2026', 'limit-db-me', 0.85],
    ] as const) {
      const [x, y] = [m[a], m[b]];
      console.log(
        `    ${a} ${x.rps.toFixed(0)} req/s, ${x.cpuUs.toFixed(0)} µs CPU; ${b} ${y.rps.toFixed(0)} req/s, ` +
          `${y.cpuUs.toFixed(0)} µs CPU: ${pct(x.rps, y.rps)} of its req/s, ${(x.cpuUs / y.cpuUs).toFixed(2)}x its CPU ` +
          `per request  [${x.rps / y.rps >= target ? 'PASS' : 'FAIL'}: >= ${target * 100} %]`,
      );
      console.log(roundRatioLine(rps, cpu, a, b, target));
    }
    // what MCP's layer costs above the same call on REST, server by server: the work of the MCP side alone, which a
    // ratio of throughputs mixes with the work both sides share
    const above = (mcp: string, rest: string) => {
      const rests = cpu.get(rest)!;
      const d = median(cpu.get(mcp)!.map((x, i) => x - rests[i]));
      return `${d >= 0 ? '+' : ''}${d.toFixed(0)}`;
    };
    console.log(
      `    MCP get_me's CPU above the same server's GET /v1/me, µs a request (median of the rounds' own differences), ` +
        `2025 / 2026: svc ${above('mcp-get-me', 'me')} / ${above('mcp-get-me-2026', 'me')}; ` +
        `limit ${above('limit-mcp', 'limit-me')} / ${above('limit-mcp-2026', 'limit-me')}; ` +
        `limit-db ${above('limit-db-mcp', 'limit-db-me')} / ${above('limit-db-mcp-2026', 'limit-db-me')}`,
    );
    return m;
  } finally {
    await Promise.all(servers.map((s) => s.server.stop()));
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of each round's own ratio of `a` to `b` (req/s, and CPU per request), with its verdict. */
function roundRatioLine(
  rps: Map<string, number[]>,
  cpu: Map<string, number[]>,
  a: string,
  b: string,
  target: number,
): string {
  const per = (m: Map<string, number[]>) => roundRatios(m.get(a)!, m.get(b)!);
  const r = per(rps);
  const ratio = median(r);
  return (
    `      median of the rounds' own ratios: ${(ratio * 100).toFixed(0)} % of ${b}'s req/s ` +
    `(${r.map((x) => (x * 100).toFixed(0)).join(', ')}), ${median(per(cpu)).toFixed(2)}x its CPU per request  ` +
    `[${ratio >= target ? 'PASS' : 'FAIL'}: >= ${target * 100} %]`
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  measureLimit(readBenchOptions()).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
