import { afterAll, describe, expect, it } from 'vitest';
import { startReceiver } from './helpers.js';
import { spawnServer, svc, tempEnv, waitFor } from './processes.js';

describe('crash safety of the outbox (the real server as a child process)', () => {
  const tmp = tempEnv();
  afterAll(() => tmp.remove());

  it('delivers every event written before a SIGKILL once the server is back with its worker', async () => {
    await using rx = await startReceiver();
    // 1: the server with its worker off, so deliveries stay pending, as they would behind a down receiver
    const first = await spawnServer({ ...tmp.env, SVC_WORKER: 'off' });
    const key = /API key\s+(svc_test_\S+)/.exec(first.stdout())![1];
    const roomId = /room\s+(room_\S+)/.exec(first.stdout())![1];
    const v2 = await svc(tmp.env, ['webhook', 'create', '--room', roomId, '--url', `${rx.url}?v=2`]);
    const v1 = await svc(tmp.env, [
      'webhook',
      'create',
      '--room',
      roomId,
      '--url',
      `${rx.url}?v=1`,
      '--api-version',
      '2025-10-23',
    ]);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = (p: string, body: unknown) =>
      fetch(first.base + p, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    const titles = ['one', 'two', 'three', 'four', 'five'];
    for (const title of titles) expect((await post(`/v1/rooms/${roomId}/records`, { title })).status).toBe(201);
    expect((await post(`/v1/rooms/${roomId}/messages`, { body: 'hi' })).status).toBe(201);
    const db = tmp.db();
    const pending = db.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = ?').get('pending') as {
      n: number;
    };
    const events = db.prepare("SELECT id, type FROM events WHERE type != 'room.created' ORDER BY seq").all() as {
      id: string;
      type: string;
    }[];
    db.close();
    expect(events).toHaveLength(6);
    expect(pending.n).toBe(12);

    first.child.kill('SIGKILL');
    await first.exited;
    expect(rx.requests).toHaveLength(0);

    // 2: back up with the worker on: everything committed before the crash arrives, once per webhook
    const second = await spawnServer({ ...tmp.env, SVC_WORKER: 'on' });
    try {
      await waitFor(() => rx.requests.length >= 12, 'all 12 deliveries');
      const got = (v: string) =>
        rx.requests
          .filter((r) => r.path === `/hook?v=${v}`)
          .map((r) => r.headers['svc-webhook-id'])
          .sort();
      expect(got('2')).toEqual(events.map((e) => e.id).sort());
      expect(got('1')).toEqual(events.map((e) => e.id).sort());
      expect(new Set(rx.requests.map((r) => r.headers['svc-webhook-delivery'])).size).toBe(12);
      expect(v1.id).not.toBe(v2.id);
    } finally {
      second.child.kill('SIGTERM');
    }
    expect(await second.exited).toBe(0);
    const after = tmp.db();
    const rows = after.prepare('SELECT state, "leaseOwner" FROM webhook_deliveries').all() as {
      state: string;
      leaseOwner: string | null;
    }[];
    after.close();
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.state === 'succeeded' && r.leaseOwner === null)).toBe(true);
  });
});
