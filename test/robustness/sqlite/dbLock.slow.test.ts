import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/auth/audit.js';
import { call, createWorld, startTestServer, type TestServer } from '../../helpers/harness.js';
import { postMcp, toolCall } from '../../mcp/mcpClient.js';
import { integrityProblems } from '../integrity.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * Another process takes SQLite's write lock (`BEGIN IMMEDIATE`) on the server's database file and keeps it
 * for `holdMs` (as a backup tool, a migration or `sqlite3` in a shell would). Resolves once the lock is held;
 * `released` settles when the holder has committed and exited.
 */
async function holdWriteLock(file: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const script = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)}); db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n'); setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited ${code}`)))),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.on('exit', () => reject(new Error('lock holder exited before locking')));
  });
  return { released };
}

const dbFile = (t: TestServer) => path.join(t.dataDir, 'svc.sqlite');
const setBusyTimeout = (t: TestServer, ms: number) =>
  (t.rt.ds.driver as unknown as { databaseConnection: { pragma(s: string): unknown } }).databaseConnection.pragma(
    `busy_timeout = ${ms}`,
  );

describe('the database locked by another process for a while (SQLite)', () => {
  it('requests that arrive during a short lock wait for it and then succeed, REST and MCP alike', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const lock = await holdWriteLock(dbFile(t), 1500);
    const writes = Array.from({ length: 8 }, (_, i) =>
      call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: `during lock ${i}` } }),
    );
    const mcp = postMcp(t, toolCall('create_task', { roomId: w.roomId, title: 'during lock' }), { token: w.key });
    const read = call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: w.key });
    const results = await Promise.all(writes);
    await lock.released;
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect((await read).status).toBe(200);
    const tool = await mcp;
    expect(tool.status).toBe(200);
    expect(tool.body.result.isError).toBeFalsy();
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?limit=50`, { key: w.key });
    expect(list.body.data.map((m: { body: string }) => m.body).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `during lock ${i}`).sort(),
    );
    expect(await integrityProblems(t.rt)).toEqual([]);
  });

  it('past the busy timeout a write fails cleanly (503 service_unavailable with Retry-After) and a retry with its key succeeds once', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    setBusyTimeout(t, 150);
    const lock = await holdWriteLock(dbFile(t), 1200);
    const keys = ['lock-a', 'lock-b', 'lock-c'];
    const during = await Promise.all(
      keys.map((k) =>
        call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
          key: w.key,
          body: { body: k },
          headers: { 'idempotency-key': k },
        }),
      ),
    );
    const tool = await postMcp(
      t,
      toolCall('create_message', { roomId: w.roomId, body: 'mcp during lock', idempotencyKey: 'lock-m' }),
      { token: w.key },
    );
    await lock.released;
    for (const r of during) {
      // either it waited long enough, or it was refused before anything was written
      expect([201, 503]).toContain(r.status);
      if (r.status === 503) {
        expect(r.body.error).toMatchObject({ code: 'service_unavailable', requestId: r.headers.get('x-request-id') });
        expect(r.headers.get('retry-after')).toBe('1');
      }
    }
    expect(tool.status).toBeLessThan(500);
    const toolResult = tool.body.result;
    if (toolResult.isError) expect(JSON.parse(toolResult.content[0].text).error.code).toBe('service_unavailable');
    expect(during.some((r) => r.status === 503)).toBe(true);

    setBusyTimeout(t, 10_000);
    const retried = await Promise.all(
      keys.map((k) =>
        call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
          key: w.key,
          body: { body: k },
          headers: { 'idempotency-key': k },
        }),
      ),
    );
    expect(retried.map((r) => r.status)).toEqual([201, 201, 201]);
    const again = await postMcp(
      t,
      toolCall('create_message', { roomId: w.roomId, body: 'mcp during lock', idempotencyKey: 'lock-m' }),
      { token: w.key },
    );
    expect(again.body.result.isError).toBeFalsy();
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?limit=50`, { key: w.key });
    // one message per key: nothing was half-written by the refused attempts, nothing doubled by the retries
    expect(list.body.data.map((m: { body: string }) => m.body).sort()).toEqual([...keys, 'mcp during lock'].sort());
    expect(await integrityProblems(t.rt)).toEqual([]);
  });

  it('a read that ran while the lock outlasts the busy timeout answers 503, is charged nothing, and its audit row is written once the lock is gone', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const before = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(before.headers.get('svc-api-units-used')).toBe('1');
    setBusyTimeout(t, 150);
    const lock = await holdWriteLock(dbFile(t), 1200);
    // the read runs (reads are not locked out), then its count, charge and audit row cannot be committed
    const during = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?limit=50`, { key: w.key });
    await lock.released;
    setBusyTimeout(t, 10_000);
    expect(during.status).toBe(503);
    expect(during.body.error).toMatchObject({
      code: 'service_unavailable',
      requestId: during.headers.get('x-request-id'),
    });
    expect(during.body.data).toBeUndefined();
    const after = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(after.status).toBe(200);
    expect(after.headers.get('svc-api-units-used')).toBe('2');
    // the row kept in memory is written within the backlog's retry (every second)
    let row: Awaited<ReturnType<typeof listAudit>>[number] | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      row = (await listAudit(t.rt.services, { limit: 10 })).find(
        (r) => r.requestId === during.headers.get('x-request-id'),
      );
      if (!row) await new Promise((r) => setTimeout(r, 100));
    }
    expect(row).toMatchObject({
      statusCode: 503,
      errorCode: 'service_unavailable',
      routePattern: '/v1/rooms/{roomId}/messages',
    });
    expect(await integrityProblems(t.rt)).toEqual([]);
  });
});
