import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { WebSocket } from 'undici';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { startServerProcess, type Child } from '../multiprocess/processes.js';

/**
 * A database and data directory for the real server run as a child process (`tsx src/main.ts`), on the engine
 * of the vitest project: a fresh SQLite file, or a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 * `open()` gives an in-process runtime on the same database (to set up data before, and to inspect after).
 */
export interface ServerDatabase {
  env: Record<string, string>;
  dataDir: string;
  open(): Promise<Runtime>;
  start(extra?: Record<string, string>): Promise<Child & { base: string }>;
  remove(): Promise<void>;
}

export async function serverDatabase(extra: Record<string, string> = {}): Promise<ServerDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-robust-'));
  const base = process.env.TEST_DATABASE_URL;
  let url = `sqlite:${path.join(dataDir, 'svc.sqlite')}`;
  let dbName: string | null = null;
  if (base?.startsWith('postgres')) {
    dbName = `svc_rb_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    url = Object.assign(new URL(base), { pathname: `/${dbName}` }).toString();
  }
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    SVC_SECRET: randomBytes(32).toString('base64url'),
    SVC_WEBHOOK_KEY: randomBytes(32).toString('base64'),
    SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
    SVC_RATE_LIMIT: '1000000',
    SVC_MONTHLY_UNITS: '100000000',
    ...extra,
  };
  return {
    env,
    dataDir,
    open: () => openRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' })),
    start: (more = {}) => startServerProcess({ ...env, ...more }),
    async remove() {
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dbName) {
        const admin = new pg.Client({ connectionString: base });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).finally(() => admin.end());
      }
    },
  };
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status). */
export function residentBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/** A request's outcome as the client saw it: an HTTP status, or the network error that ended it. */
export type Outcome = { status: number; body: any } | { error: string };

export async function attempt(url: string, init: RequestInit): Promise<Outcome> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* kept as text */
    }
    return { status: res.status, body };
  } catch (err) {
    const e = err as { cause?: { code?: string; message?: string }; message: string };
    return { error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

/**
 * Memory of a server child started with `NODE_OPTIONS=--inspect=127.0.0.1:0`, measured after a full garbage
 * collection (through the inspector on loopback), so that the figure does not depend on where in its GC
 * cycle the process happens to be: resident set (VmRSS) and V8 heap in use.
 */
export async function memoryAfterGc(output: () => string, pid: number): Promise<{ rss: number; heapUsed: number }> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(output())?.[1];
  if (!url) throw new Error('the server was not started with --inspect');
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')));
  });
  let id = 0;
  const pending = new Map<number, (v: any) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data));
    pending.get(m.id)?.(m.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    for (let i = 0; i < 3; i++) await send('HeapProfiler.collectGarbage');
    const r = await send('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
    return { rss: residentBytes(pid), heapUsed: Number(r.result.value) };
  } finally {
    ws.close();
  }
}
