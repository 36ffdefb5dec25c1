import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A client started as a child process: its output so far, what it asks the user to open, and its exit. */
export interface ClientProcess {
  stdout(): string;
  stderr(): string;
  /** Resolves with the next URL the client asks the user to open (printed on stderr) that matches `pattern`. */
  nextUrl(pattern: RegExp): Promise<URL>;
  write(line: string): void;
  exited: Promise<number | null>;
  kill(): void;
}

/**
 * Starts `node <script> …args` the way a user's shell would, with a HOME of its own (the clients keep their
 * OAuth state there) and `BROWSER=true`, so the opener they call succeeds without starting a browser: the
 * test plays the browser from the URL the client prints.
 */
export function startClientProcess(script: string, args: string[], env: Record<string, string>): ClientProcess {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', BROWSER: 'true', NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let seen = 0;
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  void exited.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  let closed = false;
  void exited.then(() => (closed = true));
  return {
    stdout: () => out,
    stderr: () => err,
    async nextUrl(pattern) {
      for (;;) {
        const urls = [...err.slice(seen).matchAll(/https?:\/\/[^\s"'<>]+/g)];
        const hit = urls.find((m) => pattern.test(m[0]));
        if (hit) {
          seen += hit.index + hit[0].length;
          return new URL(hit[0]);
        }
        if (closed) throw new Error(`the client exited without printing a URL; stderr:\n${err}\nstdout:\n${out}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    write: (line) => child.stdin.write(line),
    exited,
    kill: () => child.kill(),
  };
}

/** A loopback port free at the time of asking (for a client's OAuth callback listener). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A temporary HOME for one client, removed by the returned disposer. */
export function tempHome(prefix: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, [Symbol.dispose]: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
