// How long the operator CLI takes to answer, beside a bare `node -e 0` on the same Node, measured side by side
// (one run of each in turn, medians of the rounds): `svc help`, `svc <command> --help`, a command that opens the
// database (`svc key create`), and `npx svc help` beside `svc help` (what npm itself adds). Prints the ratios
// against the targets; never fails: a measurement, not a test (bench/README.md). Alone: `npx tsx bench/cli.ts`,
// or `BENCH_ONLY=cli npm run bench`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './runLoad.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SVC = path.join(ROOT, 'bin', 'svc.mjs');

export interface CliFigures {
  rounds: number;
  loadBefore: string;
  loadAfter: string;
  /** Median milliseconds of each command line. */
  medians: Record<string, number>;
  rows: { name: string; ms: number; base: string; ratio: number; target: number | null }[];
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Runs the command lines in turn, `rounds` times, and returns each one's median wall time in milliseconds. */
export function measureCli(rounds = Number(process.env.BENCH_CLI_ROUNDS ?? 5)): CliFigures {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cli-'));
  const { BASE_URL: _unused, ...parentEnv } = process.env;
  const env = {
    ...parentEnv,
    NODE_ENV: 'test',
    DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
    DATA_DIR: dir,
    // `npx` finds the project's bin and its provisioned Node first, as in a shell in the project
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const node = process.execPath;
  const run = (cmd: string, args: string[]) => {
    const t = performance.now();
    const r = spawnSync(cmd, args, { env, cwd: ROOT, encoding: 'utf8' });
    const ms = performance.now() - t;
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
    return { ms, stdout: r.stdout };
  };
  try {
    // the first start builds the CLI if the sources changed and fills the compile cache: not measured
    const user = JSON.parse(
      run(node, [SVC, 'user', 'create', '--email', 'bench@example.test', '--name', 'B', '--password', 'long enough pw'])
        .stdout.trim()
        .split('\n')
        .at(-1)!
        .replace(/^id: (.*)$/, '{"id":"$1"}'),
    ) as { id: string };
    const lines: Record<string, [string, string[]]> = {
      'node -e 0': [node, ['-e', '0']],
      'svc help': [node, [SVC, 'help']],
      'svc key create --help': [node, [SVC, 'key', 'create', '--help']],
      'svc key create': [
        node,
        [SVC, 'key', 'create', '--user', user.id, '--name', 'bench', '--scopes', 'me:read', '--mode', 'test'],
      ],
      'npx node -e 0': ['npx', ['node', '-e', '0']],
      'npx svc help': ['npx', ['svc', 'help']],
    };
    for (const [cmd, args] of Object.values(lines)) run(cmd, args);
    const loadBefore = loadavg();
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(lines).map((k) => [k, []]));
    for (let i = 0; i < rounds; i++)
      for (const [name, [cmd, args]] of Object.entries(lines)) times[name].push(run(cmd, args).ms);
    const medians = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    const row = (name: string, base: string, target: number | null) => ({
      name,
      ms: medians[name],
      base,
      ratio: medians[name] / medians[base],
      target,
    });
    return {
      rounds,
      loadBefore,
      loadAfter: loadavg(),
      medians,
      rows: [
        row('svc help', 'node -e 0', 4),
        row('svc key create --help', 'node -e 0', 4),
        row('svc key create', 'node -e 0', 10),
        row('npx node -e 0', 'node -e 0', null),
        row('npx svc help', 'npx node -e 0', null),
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function printCli(f: CliFigures): void {
  console.log(`CLI start-up (${f.rounds} rounds side by side, node ${process.version}; medians)`);
  console.log(`  load average before: ${f.loadBefore}, after: ${f.loadAfter}`);
  console.log(`  node -e 0                     ${f.medians['node -e 0'].toFixed(0).padStart(6)} ms`);
  for (const r of f.rows) {
    const verdict = r.target === null ? '' : r.ratio <= r.target ? `PASS (≤ ${r.target}×)` : `FAIL (> ${r.target}×)`;
    console.log(
      `  ${r.name.padEnd(28)}  ${r.ms.toFixed(0).padStart(6)} ms  ${r.ratio.toFixed(1).padStart(5)}× ${r.base.padEnd(14)} ${verdict}`,
    );
  }
  // npm runs a project's own bin (`svc` is this package's) by loading its tree and the npx cache first, which
  // `npx node` (a file in node_modules/.bin) skips: what npx adds to svc is npm's, svc's share is `svc help`
  const npm = f.medians['npx svc help'] - f.medians['svc help'];
  console.log(`  npm's share of npx svc help   ${npm.toFixed(0).padStart(6)} ms (npx svc help - svc help)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) printCli(measureCli());
