import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createRecord } from '../../src/domain/records.js';
import { inTransaction } from '../../db/transaction.js';
import { openRuntime } from '../../src/runtime.js';
import { startReceiver, type Receiver } from './helpers.js';
import { svc, tempEnv, waitFor } from './processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('svc webhook … and svc worker', () => {
  const tmp = tempEnv();
  let rx: Receiver;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    rx = await startReceiver();
    ids.org = (await svc(tmp.env, ['org', 'create', '--name', 'Acme'])).id;
    ids.user = (
      await svc(tmp.env, [
        'user',
        'create',
        '--email',
        'ops@example.test',
        '--name',
        'Ops',
        '--password',
        'correct horse battery',
        '--org',
        ids.org,
        '--role',
        'owner',
      ])
    ).id;
    ids.room = (
      await svc(tmp.env, ['room', 'create', '--name', 'General', '--created-by', ids.user, '--org', ids.org])
    ).id;
  });
  afterAll(async () => {
    await rx.close();
    tmp.remove();
  });

  it('creates a webhook and prints {"id","secret"}; the secret is stored only encrypted', async () => {
    const w = await svc(tmp.env, [
      'webhook',
      'create',
      '--room',
      ids.room,
      '--url',
      rx.url,
      '--api-version',
      '2025-10-23',
      '--header',
      'Authorization: Bearer abc',
      '--header',
      'User-Agent: Custom/1',
      '--created-by',
      ids.user,
    ]);
    expect(Object.keys(w).sort()).toEqual(['id', 'secret', 'standardSecret']);
    expect(w.id).toMatch(/^wh_/);
    expect(w.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // the same key for the Standard Webhooks libraries: whsec_ + base64 of the bytes svc signs with
    expect(w.standardSecret).toBe(`whsec_${Buffer.from(w.secret).toString('base64')}`);
    ids.hook = w.id;
    const db = tmp.db();
    const row = db.prepare('SELECT * FROM webhooks WHERE id = ?').get(w.id) as Record<string, unknown>;
    db.close();
    expect(row).toMatchObject({
      apiVersion: '2025-10-23',
      headerNames: '["Authorization","User-Agent"]',
      createdById: ids.user,
      roomId: ids.room,
    });
    expect(JSON.stringify(row)).not.toContain(w.secret);
    expect(JSON.stringify(row)).not.toContain('Bearer abc');
  });

  it('refuses protected headers, internal URLs and bad versions with a clear error and exit code', async () => {
    const fail = (args: string[]) =>
      svc(tmp.env, ['webhook', 'create', '--room', ids.room, ...args]).then(
        () => null,
        (e) => e,
      );
    for (const h of ['X-Webhook-Signature: forged', 'Svc-Webhook-Id: evt_x']) {
      const e = await fail(['--url', rx.url, '--header', h]);
      expect(e?.stderr, h).toMatch(/validation_error: Custom header .* is not allowed/);
    }
    const internal = await fail(['--url', 'http://169.254.169.254/latest']);
    // the refusal says the address is internal without naming an address
    expect(internal.stderr).toMatch(/validation_error: URL points to an internal or special address;/);
    expect(internal.stderr.split('\n')[0]).not.toMatch(/\(169\.254\.169\.254\)/);
    expect((await fail(['--url', rx.url, '--api-version', '2024-01-01'])).code).toBe(2);
  });

  it('rotates (period 1-90 days), completes, deactivates and activates', async () => {
    const r = await svc(tmp.env, ['webhook', 'rotate', '--id', ids.hook, '--period-days', '30']);
    expect(Object.keys(r).sort()).toEqual(['nextSecret', 'nextStandardSecret', 'rotationEndsAt']);
    expect(r.nextSecret).toMatch(/^whsec_/);
    expect(r.nextStandardSecret).toBe(`whsec_${Buffer.from(r.nextSecret).toString('base64')}`);
    expect(new Date(r.rotationEndsAt).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    await expect(svc(tmp.env, ['webhook', 'rotate', '--id', ids.hook])).rejects.toThrow(/invalid_state/);
    expect(await svc(tmp.env, ['webhook', 'complete-rotation', '--id', ids.hook])).toEqual({});
    expect(await svc(tmp.env, ['webhook', 'deactivate', '--id', ids.hook])).toEqual({});
    expect(await svc(tmp.env, ['webhook', 'activate', '--id', ids.hook])).toEqual({});
    await expect(svc(tmp.env, ['webhook', 'activate', '--id', 'wh_01KAR3V6X5Q2Z8N4M7P9W1T3YB'])).rejects.toThrow(
      /not_found/,
    );
  });

  it('svc webhook update sets the filter and throttle, and svc webhook recover prints {"queued":N}', async () => {
    expect(
      await svc(tmp.env, [
        'webhook',
        'update',
        '--id',
        ids.hook,
        '--events',
        'task.created,record.updated',
        '--max-per-second',
        '10',
      ]),
    ).toEqual({ id: ids.hook, eventTypes: ['record.updated', 'task.created'], maxDeliveriesPerSecond: 10 });
    const preview = await svc(tmp.env, ['webhook', 'update', '--id', ids.hook, '--events', 'room.created']).then(
      () => null,
      (e) => e,
    );
    expect(preview.stderr).toMatch(/validation_error: room\.created is a preview event type/);
    expect(
      (
        await svc(tmp.env, ['webhook', 'update', '--id', ids.hook, '--max-per-second', 'lots']).then(
          () => null,
          (e) => e,
        )
      ).code,
    ).toBe(2);
    expect(
      await svc(tmp.env, ['webhook', 'update', '--id', ids.hook, '--events', 'all', '--max-per-second', 'unlimited']),
    ).toEqual({ id: ids.hook, eventTypes: [], maxDeliveriesPerSecond: null });
    expect(
      await svc(tmp.env, [
        'webhook',
        'recover',
        '--id',
        ids.hook,
        '--since',
        new Date(Date.now() - 3_600_000).toISOString(),
      ]),
    ).toEqual({ queued: 0 });
    const future = await svc(tmp.env, ['webhook', 'recover', '--id', ids.hook, '--since', '2999-01-01T00:00:00Z']).then(
      () => null,
      (e) => e,
    );
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(/rule_violation: since is in the future/);
  });

  it('svc worker delivers queued events alone and stops on SIGTERM, leaving no lease behind', async () => {
    const before = rx.requests.length;
    const child = spawn(process.execPath, ['bin/svc.mjs', 'worker', '--json'], {
      cwd: ROOT,
      env: tmp.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // another process writes (as the API would): the record, its event and its delivery commit together
    const rt = await openRuntime(loadConfig(tmp.env));
    try {
      const actor = {
        kind: 'app' as const,
        userId: ids.user,
        organizationId: ids.org,
        billingEntity: `org:${ids.org}`,
        scopes: [],
        credential: { method: 'api_key' as const, id: 'k' },
        plan: 'default',
      };
      await inTransaction(rt.services, (m) =>
        createRecord(m, new Date(), actor, ids.room, { title: 'From elsewhere' }),
      );
    } finally {
      await rt.close();
    }
    await waitFor(() => rx.requests.length > before, 'the worker to deliver');
    const req = rx.requests[rx.requests.length - 1];
    expect(req.headers['svc-webhook-type']).toBe('record.created');
    expect(req.headers['user-agent']).toBe('Custom/1');
    expect(req.headers['x-webhook-event']).toBe('record.created');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(JSON.parse(out)).toEqual({});
    const db = tmp.db();
    const leased = db.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE "leaseOwner" IS NOT NULL').get() as {
      n: number;
    };
    db.close();
    expect(leased.n).toBe(0);
  });
});
