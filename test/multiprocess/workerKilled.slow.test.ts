import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { spawnNode } from './processes.js';

const waitFor = async (what: string, check: () => Promise<boolean> | boolean) => {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('a delivery worker killed mid-delivery (PostgreSQL)', () => {
  it('another worker delivers the event once the lease is over; nothing is lost', async () => {
    const env = {
      SVC_SECRET: randomBytes(32).toString('base64url'),
      SVC_WEBHOOK_KEY: randomBytes(32).toString('base64'),
      SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
    };
    await using t = await startTestServer({ env });
    const w = await createWorld(t.rt);
    // the receiver holds its first request open (the worker is mid-delivery), and answers the later ones
    const got: string[] = [];
    const held: ServerResponse[] = [];
    const receiver = createServer((req, res) => {
      got.push(String(req.headers['svc-webhook-id']));
      req.resume();
      if (got.length === 1) held.push(res);
      else res.writeHead(204).end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    await createWebhook(t.rt.services, {
      roomId: w.roomId,
      url: `http://127.0.0.1:${port}/hook`,
      createdById: w.owner.id,
    });
    const workerEnv = { ...env, DATABASE_URL: t.env.DATABASE_URL, NODE_ENV: 'test', LOG_LEVEL: 'warn' };
    const first = spawnNode(['src/cli/main.ts', 'worker'], workerEnv);
    let second: ReturnType<typeof spawnNode> | undefined;
    try {
      const posted = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hi' } });
      expect(posted.status).toBe(201);
      await waitFor('the first attempt', () => got.length === 1);
      first.proc.kill('SIGKILL');
      await first.exited;
      for (const res of held) res.destroy();
      const ds = t.rt.services.ds;
      // the dead worker's lease runs out (as it would after its length)
      await ds.query(`UPDATE webhook_deliveries SET "leaseUntil" = '2000-01-01T00:00:00.000Z' WHERE state = 'pending'`);
      second = spawnNode(['src/cli/main.ts', 'worker'], workerEnv);
      await waitFor(
        'the delivery to succeed',
        async () => (await ds.query(`SELECT state FROM webhook_deliveries`))[0]?.state === 'succeeded',
      );
      const [event] = await ds.query(`SELECT id FROM events WHERE type = 'message.created'`);
      expect(got.length).toBeGreaterThanOrEqual(2);
      expect(new Set(got)).toEqual(new Set([event.id]));
    } finally {
      first.proc.kill('SIGKILL');
      await second?.stop();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
