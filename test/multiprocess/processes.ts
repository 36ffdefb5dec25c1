import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Helpers to run the real server (and `svc worker`) as child processes, for multi-process tests. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

export interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnNode(args: string[], env: Record<string, string>): Child {
  const { BASE_URL: _vite, ...parent } = process.env;
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env: { ...parent, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return {
    proc,
    output: () => out,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/**
 * The real server as a child process on a free port; resolves once /healthz answers. The port is free when
 * chosen, not reserved: another process (a second copy of the suite on the same machine) may take it before the
 * child binds it, so a child that exits with EADDRINUSE is started again on another port.
 */
export async function startServerProcess(env: Record<string, string>): Promise<Child & { base: string }> {
  for (let tries = 1; ; tries++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawnNode(['src/main.ts'], {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
      PORT: String(port),
      BASE_URL: base,
    });
    let exited = false;
    void child.exited.then(() => (exited = true));
    for (let i = 0; i < 300 && !exited; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).status === 200 && !exited) return { ...child, base };
      } catch {
        /* not yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (exited && tries < 5 && child.output().includes('EADDRINUSE')) continue;
    await child.stop('SIGKILL');
    throw new Error(`server did not start: ${child.output().slice(-500)}`);
  }
}
