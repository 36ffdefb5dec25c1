import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

function start(env: Record<string, string>) {
  const { BASE_URL: _vite, ...parent } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...parent, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

async function waitHealthy(base: string, exited: Promise<unknown>) {
  let done = false;
  void exited.then(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.status === 200) return r.json();
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become healthy');
}

describe('npm start', () => {
  it('seeds demo data on an empty database, prints a curl line, uses WAL, and shuts down gracefully on SIGTERM', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const s = start({
      PORT: String(port),
      BASE_URL: base,
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
    });
    expect(await waitHealthy(base, s.exited)).toEqual({ status: 'ok' });
    const key = /svc_test_[A-Za-z0-9_-]{43}/.exec(s.output())?.[0];
    expect(key).toBeTruthy();
    expect(s.output()).toContain(`curl -H "Authorization: Bearer ${key}" ${base}/v1/rooms`);
    expect(s.output()).toMatch(/password: \S+/);
    const rooms = (await (
      await fetch(`${base}/v1/rooms`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as any;
    expect(rooms.data).toHaveLength(1);
    // an upload that is still streaming when SIGTERM arrives completes
    const slow = new ReadableStream({
      async start(c) {
        c.enqueue(new TextEncoder().encode('{"body":'));
        await new Promise((r) => setTimeout(r, 300));
        c.enqueue(new TextEncoder().encode('"sent during shutdown"}'));
        c.close();
      },
    });
    const inflight = fetch(`${base}/v1/rooms/${rooms.data[0].id}/messages`, {
      method: 'POST',
      body: slow,
      duplex: 'half',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    } as RequestInit);
    await new Promise((r) => setTimeout(r, 100));
    s.child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).toBe(201);
    expect(await s.exited).toBe(0);
    const db = new Database(path.join(dir, 'svc.sqlite'), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((db.prepare('SELECT body FROM messages').all() as { body: string }[]).map((r) => r.body)).toEqual([
      'sent during shutdown',
    ]);
    db.close();
    // a second start on the same database does not seed again
    const again = start({
      PORT: String(port),
      BASE_URL: base,
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
    });
    await waitHealthy(base, again.exited);
    expect(again.output()).not.toContain('Demo data created');
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a bad configuration with a precise message and exit code 1', async () => {
    const s = start({ PORT: 'eighty', DATABASE_URL: 'mysql://x' });
    expect(await s.exited).toBe(1);
    expect(s.output()).toContain('PORT must be an integer');
    expect(s.output()).toContain('DATABASE_URL must be sqlite:<path> or postgres://');
  });
});
