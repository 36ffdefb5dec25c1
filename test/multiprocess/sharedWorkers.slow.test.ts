import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { rotateWebhookSecret } from '../../src/webhooks/rotation.js';
import { decryptSecret } from '../../src/webhooks/secretBox.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld, type World } from '../helpers/harness.js';
import { spawnNode, startServerProcess, type Child } from './processes.js';

// Runs in the `postgres` vitest project only: two servers with their in-process workers and a separate
// `svc worker`, all on one PostgreSQL, deliver every event exactly once.
const base = process.env.TEST_DATABASE_URL!;
const dbName = `svc_mw_${randomBytes(6).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).toString();
const env = {
  DATABASE_URL: url,
  SVC_SECRET: randomBytes(32).toString('base64url'),
  SVC_WEBHOOK_KEY: randomBytes(32).toString('base64'),
  SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
  SVC_RATE_LIMIT: '10000',
  SVC_MONTHLY_UNITS: '100000',
  LOG_LEVEL: 'warn',
};
const children: Child[] = [];
const servers: (Child & { base: string })[] = [];
const received: { delivery: string; event: string; path: string }[] = [];
let receiver: Server;
let world: World;
let webhookId: string;
let rotatingId: string;
let rotatingNext: string;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({
        delivery: String(req.headers['svc-webhook-delivery']),
        event: String(req.headers['svc-webhook-id']),
        path: req.url ?? '',
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rt = await openRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  world = await createWorld(rt);
  const port = (receiver.address() as AddressInfo).port;
  webhookId = (
    await createWebhook(rt.services, {
      roomId: world.roomId,
      url: `http://127.0.0.1:${port}/hook`,
      createdById: world.owner.id,
    })
  ).webhook.id;
  // a second webhook whose rotation period has already ended: every worker round tries to promote it
  rotatingId = (
    await createWebhook(rt.services, {
      roomId: world.roomId,
      url: `http://127.0.0.1:${port}/other`,
      createdById: world.owner.id,
    })
  ).webhook.id;
  rotatingNext = (await rotateWebhookSecret(rt.services, rotatingId, { periodDays: 1 })).nextSecret;
  await rt.services.ds.query(`UPDATE webhooks SET "rotationEndsAt" = $1 WHERE id = $2`, [
    '2000-01-01T00:00:00.000Z',
    rotatingId,
  ]);
  await rt.close();
  servers.push(
    ...(await Promise.all([
      startServerProcess({ ...env, SVC_WORKER: 'on' }),
      startServerProcess({ ...env, SVC_WORKER: 'on' }),
    ])),
  );
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
  it('claim each delivery exactly once across two servers and a separate svc worker, and promote an ended rotation once', async () => {
    const n = 40;
    const posts = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(`${servers[i % 2].base}/v1/rooms/${world.roomId}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
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
        const open = await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE "webhookId" = $1 AND "finalizedAt" IS NULL`,
          [webhookId],
        );
        if (open.rows[0].n === 0 && received.filter((r) => r.path === '/hook').length >= n) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const rows = await db.query(`SELECT state, attempts FROM webhook_deliveries WHERE "webhookId" = $1`, [webhookId]);
      // the ended rotation was promoted, once: the former next secret is now the only one
      const w = await db.query(`SELECT "secretEnc", "nextSecretEnc", "rotationEndsAt" FROM webhooks WHERE id = $1`, [
        rotatingId,
      ]);
      expect(w.rows[0].nextSecretEnc).toBeNull();
      expect(w.rows[0].rotationEndsAt).toBeNull();
      expect(decryptSecret(Buffer.from(env.SVC_WEBHOOK_KEY, 'base64'), w.rows[0].secretEnc)).toBe(rotatingNext);
      expect(rows.rows).toHaveLength(n);
      expect(rows.rows.every((r) => r.state === 'succeeded' && Number(r.attempts) === 1)).toBe(true);
    } finally {
      await db.end();
    }
    const mine = received.filter((r) => r.path === '/hook');
    expect(mine).toHaveLength(n);
    expect(new Set(mine.map((r) => r.delivery)).size).toBe(n);
    expect(new Set(mine.map((r) => r.event)).size).toBe(n);
  });
});
