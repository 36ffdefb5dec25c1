import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';

/** A server in a child process of its own, so the product and the bare server are measured alike. */
export interface ChildServer {
  name: string;
  baseUrl: string;
  pid: number;
  /** Lines the child wrote to stderr (kept short). */
  stderr(): string;
  /** Highest VmRSS seen since start, in bytes; sampled every 200 ms. */
  peakRss(): number;
  /** Highest VmRSS since the last call (a scenario's window), then starts a new window. */
  takeWindowPeak(): number;
  /** CPU time (user + system) the process has used so far, in milliseconds (Linux /proc; 0 elsewhere). */
  cpuMs(): number;
  /** SIGTERM, then wait for exit (SIGKILL after 15 s). */
  stop(): Promise<number | null>;
}

export interface StartChildOptions {
  name: string;
  /** Arguments after `node` (for the product: `productArgs(checkout)`). */
  args: string[];
  env: Record<string, string>;
  port: number;
  cwd: string;
  /** A program and its arguments to run `node` under (valgrind, say); `node` itself when absent. */
  wrapper?: string[];
  /** How long the server has to answer `/healthz` (default 60 s). */
  readyTimeoutMs?: number;
}

/**
 * The environment of a product server started by a bench tool: this process's environment, then the server on
 * 127.0.0.1:`port` with a SQLite database and its data in `dir`, a fresh secret, limits too high to refuse
 * anything the load asks, warnings-only logs and the delivery worker off; `extra` last (it wins).
 */
export function productEnv(dir: string, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
    DATA_DIR: dir,
    SVC_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    SVC_RATE_LIMIT: '1000000000',
    SVC_MONTHLY_UNITS: '1000000000000',
    SVC_WORKER: 'off',
    ...extra,
  };
}

/** A free TCP port on 127.0.0.1 (asked of the OS; released again before the child binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** CPU time of a process in ms: utime + stime from /proc/<pid>/stat (clock ticks, 100 per second on Linux). */
export function cpuMsOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Resident set size of a process in bytes, from /proc (Linux); 0 where /proc is missing. */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function waitHealthy(
  baseUrl: string,
  child: ChildProcess,
  timeoutMs: number,
  errText: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`server exited with ${child.exitCode} before it was ready:\n${errText()}`);
    try {
      const r = await fetch(`${baseUrl}/healthz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready after ${timeoutMs} ms:\n${errText()}`);
}

/** Spawns `node <args>` with `env` and waits for `GET /healthz` to answer 200. */
export async function startChildServer(o: StartChildOptions): Promise<ChildServer> {
  const [command, ...args] = [...(o.wrapper ?? []), process.execPath, ...o.args];
  const child = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString('utf8')).slice(-8000);
  });
  const baseUrl = `http://127.0.0.1:${o.port}`;
  let peak = 0;
  let windowPeak = 0;
  const sample = () => {
    const rss = rssOf(child.pid!);
    peak = Math.max(peak, rss);
    windowPeak = Math.max(windowPeak, rss);
  };
  const sampler = setInterval(sample, 200);
  sampler.unref();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitHealthy(baseUrl, child, o.readyTimeoutMs ?? 60_000, () => err);
  } catch (e) {
    clearInterval(sampler);
    child.kill('SIGKILL');
    throw e;
  }
  return {
    name: o.name,
    baseUrl,
    pid: child.pid!,
    stderr: () => err,
    peakRss() {
      sample();
      return peak;
    },
    cpuMs() {
      return cpuMsOf(child.pid!);
    },
    takeWindowPeak() {
      sample();
      const p = windowPeak;
      windowPeak = 0;
      return p;
    },
    async stop() {
      clearInterval(sampler);
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(kill);
      return code;
    },
  };
}

/**
 * Arguments after `node` that start the product in `checkout` exactly as its `npm start` does: the
 * `prestart` build is run first, and the `start` script's `node …` arguments are returned (a checkout
 * whose start script is `tsx <entry>` gets `--import tsx <entry>`). So the bench measures the server as
 * operators run it, memory flags included.
 */
export function productArgs(checkout: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const { prestart, start } = pkg.scripts;
  if (prestart) execSync(prestart, { cwd: checkout, stdio: 'inherit' });
  const [bin, ...args] = start.trim().split(/\s+/);
  if (bin === 'node') return args;
  if (bin === 'tsx') return ['--import', 'tsx', ...args];
  throw new Error(`cannot start the product without a shell: npm start is "${start}"`);
}

/**
 * How a limit server (bench/limit/limitServer.ts) of a product environment is started: on its own copy of the
 * seeded SQLite `file`, at `port`, with the 60 s window and the month's units in memory or committed
 * (`countsInDb`: `LIMIT_COUNTS=db`). `root` is the checkout that holds the bench.
 */
export function limitServerOptions(o: {
  name: string;
  root: string;
  env: Record<string, string>;
  port: number;
  file: string;
  countsInDb: boolean;
}): StartChildOptions {
  const env: Record<string, string> = {
    ...o.env,
    PORT: String(o.port),
    BASE_URL: `http://127.0.0.1:${o.port}`,
    DATABASE_URL: `sqlite:${o.file}`,
  };
  if (o.countsInDb) env.LIMIT_COUNTS = 'db';
  return { name: o.name, args: ['--import', 'tsx', 'bench/limit/limitServer.ts'], env, port: o.port, cwd: o.root };
}
