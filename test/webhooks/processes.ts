import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A temporary data directory with its SQLite database, for child processes of the real server and CLI. */
export function tempEnv(extra: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wh-proc-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
    DATA_DIR: dir,
    SVC_SSRF_ALLOWLIST: '127.0.0.1/32,::1/128',
    ...extra,
  };
  return {
    dir,
    env,
    db: () => new Database(path.join(dir, 'svc.sqlite'), { readonly: true }),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** `svc <args> --json` as an operator runs it; resolves with the parsed JSON, or rejects with stderr. */
export function svc(env: Record<string, string>, args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['bin/svc.mjs', ...args, '--json'],
      { cwd: ROOT, env, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) return reject(Object.assign(new Error(stderr.trim() || err.message), { code: err.code, stderr }));
        resolve(JSON.parse(stdout));
      },
    );
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * The real server (`tsx src/main.ts`) as a child process; resolves once /healthz answers. Started again on
 * another port when another process (a second copy of the suite) took the free port first (EADDRINUSE).
 */
export async function spawnServer(
  env: Record<string, string>,
  tries = 5,
): Promise<{ child: ChildProcess; base: string; stdout: () => string; exited: Promise<number | null> }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: base },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null && tries > 1 && out.includes('EADDRINUSE')) return spawnServer(env, tries - 1);
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${out.slice(-500)}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { child, base, stdout: () => out, exited };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become healthy: ${out.slice(-500)}`);
}

/** Waits for a condition (not a timed assertion: it only bounds how long a hung test waits). */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
