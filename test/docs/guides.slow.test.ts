import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsIn } from './docsDrift.js';
import { type GuideValues, promisedKeys, shBlocks, withValues } from './guideBlocks.js';

// Every runnable ```sh block of README.md and docs/*.md, run in bash as a reader pastes it, against a live server
// started as `npm start` starts it (development setup, demo data) on a temporary data directory. Blocks of one guide
// run in order in one shell's state (variables carry over, as in one terminal); each must exit 0 within its bound,
// and print the keys its comments promise. The markers and the guides' variables: guideBlocks.ts.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// generous: a block of ten `npx svc` commands takes minutes on a busy machine
const BLOCK_TIMEOUT_MS = 600_000;
const GUIDES = ['README.md', ...docsIn(fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true }) as string[])];

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-guides-'));
const dataDir = path.join(dir, 'data');
/** The reader's machine: their PATH and HOME (npx's cache), the CLI pointed at the server's database. */
const readerEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  LANG: process.env.LANG ?? 'C.UTF-8',
  DATA_DIR: dataDir,
  DATABASE_URL: `sqlite:${path.join(dataDir, 'svc.sqlite')}`,
};
let server: ChildProcess;
let serverLog = '';
let values: GuideValues;

beforeAll(async () => {
  const port = await freePort();
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...readerEnv, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.on('data', (c: Buffer) => (serverLog += c.toString()));
  server.stderr!.on('data', (c: Buffer) => (serverLog += c.toString()));
  // the development-setup line is logged just after 'svc listening' and may come in a later chunk: wait for it too
  const started = () => serverLog.includes('svc listening') && serverLog.includes('development setup');
  for (let i = 0; i < 2400 && !started(); i++) {
    if (server.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const field = (re: RegExp) => {
    const v = re.exec(serverLog)?.[1];
    if (!v) throw new Error(`the server did not print the demo data:\n${serverLog}`);
    return v;
  };
  values = {
    SVC_URL: `http://localhost:${port}`,
    SVC_API_KEY: field(/API key\s+(svc_test_\S+)/),
    ROOM: field(/room\s+(room_\S+)/),
    ORG: field(/organization\s+(org_\S+)/),
    USER_ID: field(/user\s+(usr_\S+)/),
  };
  expect(serverLog).toContain('development setup');
}, 300_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  await new Promise((r) => (server?.exitCode === null ? server.once('exit', r) : r(null)));
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

/** Starts a block in bash, in its own process group, its output in a file (background jobs may outlive bash). */
function start(code: string, stateFile: string, outFile: string): Run {
  const script = [
    `source ${JSON.stringify(stateFile)}`,
    `cd ${JSON.stringify(ROOT)}`,
    'set -a -e -o pipefail',
    code,
    `export -p > ${JSON.stringify(stateFile)}`,
  ].join('\n');
  const fd = fs.openSync(outFile, 'w');
  const child = spawn('bash', ['-c', script], { env: readerEnv, stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { child, out: outFile, exited };
}

/** Is anything of the block's process group still running (bash, or the jobs it left in the background)? */
const alive = (r: Run) => {
  try {
    process.kill(-r.child.pid!, 0);
    return true;
  } catch {
    return false;
  }
};

const kill = (r: Run) => {
  try {
    process.kill(-r.child.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
};

for (const guide of GUIDES) {
  const blocks = shBlocks({ file: guide, text: fs.readFileSync(path.join(ROOT, guide), 'utf8') }).filter(
    (b) => b.notRunnable === null,
  );
  if (!blocks.length) continue;
  describe(guide, () => {
    const stateFile = path.join(dir, `${guide.replace(/\W/g, '_')}.state`);
    const background: Run[] = [];
    /** Background blocks with what they must print by the end of the guide. */
    const laterChecks: { line: number; outFile: string; text: string; run: Run }[] = [];
    beforeAll(() => fs.writeFileSync(stateFile, ''));
    afterAll(() => background.forEach(kill));

    for (const [i, b] of blocks.entries()) {
      it(`runs the block at line ${b.line}`, { timeout: BLOCK_TIMEOUT_MS + 30_000 }, async () => {
        const outFile = path.join(dir, `${guide.replace(/\W/g, '_')}.${i}.out`);
        const run = start(withValues(b.code, values), stateFile, outFile);
        const output = () => fs.readFileSync(outFile, 'utf8');
        if (b.background !== null) {
          background.push(run);
          for (let t = 0; t < BLOCK_TIMEOUT_MS / 200 && !output().includes(b.background) && alive(run); t++)
            await new Promise((r) => setTimeout(r, 200));
          expect(output(), `${guide}:${b.line} did not print ${b.background}`).toContain(b.background);
          if (b.later !== null) laterChecks.push({ line: b.line, outFile, text: b.later, run });
          return;
        }
        const timer = setTimeout(() => kill(run), BLOCK_TIMEOUT_MS);
        const code = await run.exited;
        clearTimeout(timer);
        // background jobs the block started itself stay until the guide ends
        background.push(run);
        const text = output();
        expect(code, `${guide}:${b.line} exited ${code}:\n${b.code}\n--- output ---\n${text}`).toBe(0);
        for (const key of promisedKeys(b.code))
          expect(text, `${guide}:${b.line} promised "${key}"`).toContain(`"${key}"`);
      });
    }

    if (blocks.some((b) => b.later !== null))
      it(
        'ends with the background blocks having printed what the guide says',
        { timeout: BLOCK_TIMEOUT_MS },
        async () => {
          for (const c of laterChecks) {
            const output = () => fs.readFileSync(c.outFile, 'utf8');
            for (let t = 0; t < BLOCK_TIMEOUT_MS / 200 && !output().includes(c.text) && alive(c.run); t++)
              await new Promise((r) => setTimeout(r, 200));
            expect(output(), `${guide}:${c.line} did not print ${c.text}`).toContain(c.text);
          }
        },
      );
  });
}
