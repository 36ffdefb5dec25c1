import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The Node.js the product supports: package.json engines, a one-line refusal on anything older, and a clean
// exit (code 0, no native abort or stack) of the server as `npm start` runs it and of the operator CLI.
const ROOT = path.resolve(import.meta.dirname, '../..');
const NATIVE_TROUBLE = /Assertion failed|node::|Native stack|Aborted|core dumped|FATAL ERROR|Segmentation/;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

/** Runs a Node script as a child with its own environment; resolves with the exit code, signal and output. */
function run(args: string[], env: Record<string, string>, onOutput?: (out: string) => void) {
  // (no MALLOC_ARENA_MAX of this machine's: the test below looks for the one the start script sets)
  const { BASE_URL: _vite, MALLOC_ARENA_MAX: _arenas, ...parent } = process.env;
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...parent, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const take = (d: Buffer) => {
    out += d;
    onOutput?.(out);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, exited, output: () => out };
}

const pretendNode20 =
  'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"20.20.2"}});' +
  'Object.defineProperty(process,"version",{value:"v20.20.2"})';

describe('supported Node.js (engines: 22.19+ or 24.11+)', () => {
  it('declares the range in package.json and names 24 in .nvmrc and .node-version; an older Node is provisioned, not refused by npm', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe('^22.19.0 || >=24.11.0');
    expect(fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim()).toBe('24');
    expect(fs.readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim()).toBe('24');
    expect(fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).not.toMatch(/^engine-strict=true$/m);
    expect(pkg.scripts.prestart).toMatch(/^node scripts\/check-node\.mjs && /);
  });

  it('refuses an older Node with one line naming the version found and the version needed, for npm start and the CLI', async () => {
    // where npm install provisioned a Node (node_modules/.bin/node: this machine's own Node is older), the CLI
    // started on the old Node hands over to it instead (test/runtime/provisioning.test.ts)
    const provisioned = fs.existsSync(path.join(ROOT, 'node_modules/.bin/node'));
    if (provisioned) {
      const r = run(['--import', pretendNode20, 'bin/svc.mjs', 'org', 'create', '--name', 'Handed over', '--json'], {
        DATABASE_URL: 'sqlite::memory:',
      });
      expect(await r.exited).toEqual({ code: 0, signal: null });
      expect(JSON.parse(r.output()).id).toMatch(/^org_/);
    }
    for (const script of [
      ['scripts/check-node.mjs'],
      ...(provisioned ? [] : [['bin/svc.mjs', 'org', 'create', '--name', 'Never', '--json']]),
    ]) {
      const r = run(['--import', pretendNode20, ...script], { DATABASE_URL: 'sqlite::memory:' });
      expect(await r.exited).toEqual({ code: 1, signal: null });
      const lines = r.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('v20.20.2');
      expect(lines[0]).toContain('^22.19.0 || >=24.11.0');
    }
  });

  it('the built server (as npm start runs it) serves and exits 0 on SIGTERM with no native abort', async () => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-node-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // exactly the node arguments of the start script (its entry, scripts/serve.mjs, imports the bundle)
    const start = (
      JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
    ).scripts.start;
    const [bin, ...startArgs] = start.trim().split(/\s+/);
    expect(bin).toBe('node');
    const s = run(startArgs, {
      PORT: String(port),
      BASE_URL: base,
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      DATA_DIR: dir,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
    });
    let healthy = false;
    for (let i = 0; i < 300 && !healthy && s.child.exitCode === null; i++) {
      healthy = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((r) => setTimeout(r, 100));
    }
    expect(healthy).toBe(true);
    const key = /svc_test_[A-Za-z0-9_-]{43}/.exec(s.output())![0];
    const rooms = await fetch(`${base}/v1/rooms`, { headers: { authorization: `Bearer ${key}` } });
    expect(rooms.status).toBe(200);
    if (process.platform === 'linux') {
      // the entry replaced itself (same pid) with a process whose malloc keeps two arenas (scripts/serve.mjs)
      const environ = fs.readFileSync(`/proc/${s.child.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('MALLOC_ARENA_MAX=2');
    }
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.output()).not.toMatch(NATIVE_TROUBLE);
    // the operator CLI on the same database: several statements prepared and finalized, then a clean exit
    const cli = run(['bin/svc.mjs', 'org', 'create', '--name', 'Clean exit', '--json'], {
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      DATA_DIR: dir,
    });
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(JSON.parse(cli.output()).id).toMatch(/^org_/);
    const audit = run(['bin/svc.mjs', 'audit', 'list', '--json'], {
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      DATA_DIR: dir,
    });
    expect(await audit.exited).toEqual({ code: 0, signal: null });
    expect(audit.output()).not.toMatch(NATIVE_TROUBLE);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
