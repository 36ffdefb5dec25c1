import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { freePort, svc, tempEnv, waitFor } from '../webhooks/processes.js';

// `svc listen` across a server restart: the real server as a child process, killed (SIGKILL) and started again on
// the same port and database. The listener reconnects by itself and resumes after the last event it received:
// every event reaches the receiver exactly once, and waiting costs nothing (one unit and one audit row per
// stream opened, no polling).
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('svc listen across a server restart', { timeout: 180_000 }, () => {
  const env = tempEnv();
  let port: number;
  let base: string;
  let server: ChildProcess | null = null;
  let rx: Receiver;
  let key: string;
  let keyId: string;
  let roomId: string;

  const startServer = async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...env.env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: base },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}`);
        return fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'the server to answer',
      60_000,
    );
  };
  const post = async (body: string) => {
    const r = await fetch(`${base}/v1/rooms/${roomId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body }),
    });
    expect(r.status).toBe(201);
  };

  beforeAll(async () => {
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const org = (await svc(env.env, ['org', 'create', '--name', 'Restart'])).id;
    const user = (
      await svc(env.env, ['user', 'create', '--email', 'r@example.test', '--name', 'R', '--password', 'long enough pw'])
    ).id;
    await svc(env.env, ['org', 'add-member', '--org', org, '--user', user, '--role', 'owner']);
    roomId = (await svc(env.env, ['room', 'create', '--name', 'R', '--created-by', user, '--org', org])).id;
    const k = await svc(env.env, [
      'key',
      'create',
      '--user',
      user,
      '--org',
      org,
      '--name',
      'listen',
      '--scopes',
      'events:read,messages:write',
      '--mode',
      'test',
    ]);
    [key, keyId] = [k.token, k.id];
    rx = await startReceiver();
    await startServer();
  });
  afterAll(async () => {
    server?.kill('SIGKILL');
    await rx?.close();
    env.remove();
  });

  it('reconnects by itself and forwards every event exactly once, for one unit per stream opened', async () => {
    const listener = spawn(
      process.execPath,
      ['bin/svc.mjs', 'listen', '--url', base, '--key', key, '--forward-to', rx.url, '--interval-ms', '200'],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: env.dir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    listener.stdout!.on('data', (d) => (out += d));
    listener.stderr!.on('data', (d) => (out += d));
    try {
      await waitFor(() => out.includes('Signing secret'), 'the listener to connect', 60_000);
      for (const text of ['one', 'two', 'three']) await post(text);
      await waitFor(() => rx.requests.length >= 3, 'the first three events', 60_000);

      server!.kill('SIGKILL');
      await new Promise((r) => server!.once('exit', r));
      await waitFor(() => out.includes('lost'), 'the listener to notice', 60_000);
      await startServer();
      // written before or after the listener is back: either way it must arrive, once
      await post('four');
      await waitFor(() => out.includes('Reconnected'), 'the listener to reconnect', 60_000);
      await post('five');
      await waitFor(() => rx.requests.length >= 5, 'all five events', 60_000);

      const log = await fetch(`${base}/v1/events?roomId=${roomId}`, { headers: { authorization: `Bearer ${key}` } });
      const events = ((await log.json()) as { data: { id: string }[] }).data.map((e) => e.id);
      expect(events).toHaveLength(5);
      // a little longer: a repeat would come now, from the resumed stream's overlap
      await post('six');
      await waitFor(() => rx.requests.length >= 6, 'the sixth event', 60_000);
      const forwarded = rx.requests.map((r) => r.headers['svc-webhook-id']);
      const all = (
        (await (
          await fetch(`${base}/v1/events?roomId=${roomId}`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json()) as { data: { id: string }[] }
      ).data.map((e) => e.id);
      expect(forwarded).toEqual(all);
    } finally {
      listener.kill('SIGINT');
      await new Promise((r) => (listener.exitCode !== null ? r(null) : listener.once('exit', r)));
    }

    // what listening cost: one audit row and one unit per stream opened, and not one read of the event log
    const db = env.db();
    try {
      const rows = db
        .prepare('SELECT "routePattern", "units" FROM "audit_log" WHERE "apiKeyId" = ? AND "method" = ?')
        .all(keyId, 'GET') as { routePattern: string; units: number }[];
      const opened = (out.match(/Reconnected/g) ?? []).length + 1;
      const streams = rows.filter((r) => r.routePattern === '/v1/events/stream');
      expect(streams).toHaveLength(opened);
      expect(streams.every((r) => r.units === 1)).toBe(true);
      // the test's own two reads of the log, nothing from the listener
      expect(rows.filter((r) => r.routePattern === '/v1/events')).toHaveLength(2);
    } finally {
      db.close();
    }
  });
});
