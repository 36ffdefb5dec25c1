import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld, type World } from '../helpers/harness.js';
import { spawnNode, startServerProcess, type Child } from './processes.js';

// Runs in the `postgres` vitest project only: two servers with their in-process workers and a separate
// `svc worker`, all on one PostgreSQL, deliver every event exactly once.
const base = process.env.TEST_DATABASE_URL!;
const dbName = `svc_mw_${randomBytes(6).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).toString();
const env = {
  DATABASE_URL: url, SVC_SECRET: randomBytes(32).toString('base64url'), SVC_WEBHOOK_KEY: randomBytes(32).toString('base64'),
  SVC_SSRF_ALLOWLIST: '127.0.0.1/32', SVC_RATE_LIMIT: '10000', SVC_MONTHLY_UNITS: '100000', LOG_LEVEL: 'warn',
};
const children: Child[] = [];
const servers: (Child & { base: string })[] = [];
const received: { delivery: string; event: string }[] = [];
let receiver: Server;
let world: World;
let webhookId: string;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ delivery: String(req.headers['svc-webhook-delivery']), event: String(req.headers['svc-webhook-id']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rt = await openRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  world = await createWorld(rt);
  const port = (receiver.address() as AddressInfo).port;
  webhookId = (await createWebhook(rt.services, { roomId: world.roomId, url: `http://127.0.0.1:${port}/hook`, createdById: world.owner.id })).webhook.id;
  await rt.close();
  servers.push(...(await Promise.all([startServerProcess({ ...env, SVC_WORKER: 'on' }), startServerProcess({ ...env, SVC_WORKER: 'on' })])));
  children.push(spawnNode(['src/cli/main.ts', 'worker'], { ...env, NODE_ENV: 'test' }));
});

afterAll(async () => {
  await Promise.all([...servers, ...children].map((c) => c.stop()));
  await new Promise<void>((r) => receiver.close(() => r()));
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
});

describe('delivery workers on one PostgreSQL', () => {
  it('claim each delivery exactly once across two servers and a separate svc worker', async () => {
    const n = 40;
    const posts = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(`${servers[i % 2].base}/v1/rooms/${world.roomId}/messages`, {
          method: 'POST', headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ body: `m${i}` }),
        }),
      ),
    );
    expect(posts.every((p) => p.status === 201)).toBe(true);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      // wait (bounded) until every delivery row is finalized
      for (let i = 0; i < 300; i++) {
        const open = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE "webhookId" = $1 AND "finalizedAt" IS NULL`, [webhookId]);
        if (open.rows[0].n === 0 && received.length >= n) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const rows = await db.query(`SELECT state, attempts FROM webhook_deliveries WHERE "webhookId" = $1`, [webhookId]);
      expect(rows.rows).toHaveLength(n);
      expect(rows.rows.every((r) => r.state === 'succeeded' && Number(r.attempts) === 1)).toBe(true);
    } finally {
      await db.end();
    }
    expect(received).toHaveLength(n);
    expect(new Set(received.map((r) => r.delivery)).size).toBe(n);
    expect(new Set(received.map((r) => r.event)).size).toBe(n);
  });
});
