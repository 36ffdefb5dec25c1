import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';

/** A client started as a child process: its output so far, what it asks the user to open, and its exit. */
export interface ClientProcess {
  stdout(): string;
  stderr(): string;
  /** Resolves with the next URL the client asks the user to open (printed on stderr) that matches `pattern`. */
  nextUrl(pattern: RegExp): Promise<URL>;
  /** Resolves once stderr, from where the last wait stopped, holds `text`. */
  waitFor(text: string): Promise<void>;
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
    async waitFor(text) {
      for (;;) {
        const i = err.indexOf(text, seen);
        if (i >= 0) {
          seen = i + text.length;
          return;
        }
        if (closed) throw new Error(`the client exited without printing ${text}; stderr:\n${err}\nstdout:\n${out}`);
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

/** The tokens of a code flow run by hand (PKCE S256) for a chosen redirect URI, resource and scopes. */
export async function tokensByHand(
  t: TestServer,
  o: {
    clientId: string;
    redirectUri: string;
    user: { email: string; password: string };
    resource: string;
    scope: string;
  },
) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', t.baseUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    scope: o.scope,
    resource: o.resource,
    state: 's',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const back = await consentInBrowser(t, url, o.user);
  const res = await t.fetch('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: o.redirectUri,
      client_id: o.clientId,
      code_verifier: verifier,
    }).toString(),
  });
  if (res.status !== 200) throw new Error(`token endpoint ${res.status}: ${await res.text()}`);
  return (await res.json()) as { access_token: string; refresh_token: string; token_type: string; scope: string };
}
