import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { createWorld, type World } from '../helpers/harness.js';
import { startServerProcess, type Child } from './processes.js';

// Runs in the `postgres` vitest project only (TEST_DATABASE_URL is a PostgreSQL server).
const base = process.env.TEST_DATABASE_URL!;
const dbName = `svc_mp_${randomBytes(6).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).toString();
const servers: (Child & { base: string })[] = [];
// a fresh data directory shared by both processes: they also race to create its webhook key file
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mp-'));
let world: World;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const secret = randomBytes(32).toString('base64url');
  const env = {
    DATABASE_URL: url,
    SVC_SECRET: secret,
    SVC_WORKER: 'off',
    SVC_RATE_LIMIT: '10',
    SVC_MONTHLY_UNITS: '1000',
    DATA_DIR: dataDir,
  };
  // both processes start at once on the empty database: migrations must not race
  servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
  const rt = await openRuntime(loadConfig({ DATABASE_URL: url, SVC_SECRET: secret, LOG_LEVEL: 'silent' }));
  world = await createWorld(rt);
  await rt.close();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  fs.rmSync(dataDir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
});

const get = (i: number, p: string, init: RequestInit = {}) =>
  fetch(servers[i % 2].base + p, {
    ...init,
    headers: { authorization: `Bearer ${world.key}`, ...(init.headers as object) },
  });

describe('several server processes on one PostgreSQL', () => {
  it('share one rate-limit window per key', async () => {
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => get(i, '/v1/me')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(6);
  });

  it('give one side effect for one idempotency key across processes', async () => {
    // a second key of the same user: the first one's window is spent
    const rt = await openRuntime(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }));
    const { issueKey } = await import('../helpers/harness.js');
    const k = await issueKey(rt, {
      userId: world.owner.id,
      organizationId: world.orgId,
      scopes: ['messages:write', 'messages:read'],
    });
    await rt.close();
    const post = (i: number) =>
      fetch(`${servers[i % 2].base}/v1/rooms/${world.roomId}/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${k.token}`,
          'content-type': 'application/json',
          'idempotency-key': 'cross-process',
        },
        body: JSON.stringify({ body: 'exactly once' }),
      });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(i)));
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const bodies = await Promise.all(
      results.filter((r) => r.status === 201).map((r) => r.json() as Promise<{ id: string }>),
    );
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const n = await check.query(`SELECT count(*)::int AS n FROM messages WHERE body = 'exactly once'`);
    await check.end();
    expect(n.rows[0].n).toBe(1);
  });

  it('count API units jointly without overspending', async () => {
    const rt = await openRuntime(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }));
    const { issueKey } = await import('../helpers/harness.js');
    // a personal key: its own billing entity, with 1000 units; spend all but 5 directly, then race 9 requests (the
    // window allows 10)
    const k = await issueKey(rt, { userId: world.member.id, scopes: ['me:read'] });
    await rt.services.ds.query(`INSERT INTO unit_usage ("billingEntity", period, used) VALUES ($1, $2, 995)`, [
      `user:${world.member.id}`,
      new Date().toISOString().slice(0, 7),
    ]);
    await rt.close();
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        fetch(`${servers[i % 2].base}/v1/me`, { headers: { authorization: `Bearer ${k.token}` } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const codes = await Promise.all(
      results.filter((r) => r.status === 429).map(async (r) => ((await r.json()) as any).error.code),
    );
    expect(codes.every((c) => c === 'api_units_exhausted')).toBe(true);
  });
});
