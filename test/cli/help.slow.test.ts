import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands/index.js';
import { commandHelp, parseCommandLine } from '../../src/cli/usage.js';

// The CLI explains itself: `svc help`, `svc help <command>`, `svc <command> --help`, `svc <group> --help` print
// usage with every option's meaning and exit 0; `svc --version`; an unknown command or option names the nearest
// valid one; a usage error exits 2 with the command's usage on stderr.
const exec = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-help-'));
const { BASE_URL: _vite, ...parentEnv } = process.env;
const env = { ...parentEnv, DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`, DATA_DIR: dir, NODE_ENV: 'test' };
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI as `npx svc` does (bin/svc.mjs); resolves with its exit code and both streams. */
async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/svc.mjs', ...args], { env, cwd: process.cwd() });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('svc help', () => {
  it("every option of every command has a one-line meaning, and each command's help shows them all", () => {
    for (const cmd of commands) {
      const text = commandHelp(cmd);
      expect(text.split('\n')[0]).toBe(`Usage: ${cmd.usage}`);
      for (const [name, spec] of Object.entries(cmd.options)) {
        expect([cmd.name, name, typeof spec.description]).toEqual([cmd.name, name, 'string']);
        expect(spec.description.trim().length).toBeGreaterThan(5);
        expect(spec.description).not.toContain('\n');
        expect(text).toMatch(
          new RegExp(`^  --${name}\\b.*  ${spec.description.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
        );
      }
      expect(text).toMatch(/^ {2}--json\b/m);
      expect(text).toMatch(/^ {2}-h, --help\b/m);
    }
  });

  it('help, help <command>, <command> --help and -h, <group> --help and help <group> are help, not errors', () => {
    for (const argv of [
      ['help'],
      ['--help'],
      ['-h'],
      ['help', 'webhook', 'create'],
      ['webhook', 'create', '--help'],
      ['listen', '--help'],
      ['trigger', '-h'],
      ['worker', '--help'],
      ['webhook', '--help'],
      ['help', 'webhook'],
      ['--version'],
      // --help wins over anything else on the line
      ['org', 'create', '--nme', 'x', '--help'],
    ]) {
      expect([argv, parseCommandLine(argv).kind]).toEqual([argv, 'print']);
    }
    // a command's options are all there, and every command is in the list of `svc help`
    const general = parseCommandLine(['help']) as { text: string };
    for (const cmd of commands) expect(general.text).toMatch(new RegExp(`^ {2}${cmd.name} `, 'm'));
    expect((parseCommandLine(['webhook', '--help']) as { text: string }).text).toContain('webhook rotate');
  });

  it('names the nearest command or option to a mistyped one', () => {
    const usage = (...argv: string[]) => {
      const r = parseCommandLine(argv);
      expect(r.kind).toBe('usage');
      return (r as { text: string }).text;
    };
    expect(usage('webhok', 'create')).toMatch(
      /^Unknown command: svc webhok create\. Did you mean: svc webhook create\?/,
    );
    expect(usage('webhook', 'creat', '--room', 'r')).toMatch(
      /^Unknown command: svc webhook creat\. Did you mean: svc webhook create\?/,
    );
    expect(usage('help', 'webhook', 'rotat')).toMatch(/Did you mean: svc webhook rotate\?/);
    expect(usage('wroker')).toMatch(/Did you mean: svc worker\?/);
    expect(usage('org', 'create', '--nme', 'x')).toMatch(
      /^Unknown option --nme for svc org create\. Did you mean --name\?\nUsage: svc org create --name N\n/,
    );
    expect(usage('webhook', 'rotate', '--id', 'wh', '--period-day', '3')).toMatch(/Did you mean --period-days\?/);
    // nothing near: no guess, still the usage
    expect(usage('org', 'create', '--zzzzzzzz')).toMatch(/^Unknown option --zzzzzzzz for svc org create\nUsage: /);
    expect(usage('qqqqqq')).toMatch(/^Unknown command: svc qqqqqq\n/);
    // a group without its action lists the group's commands
    expect(usage('webhook')).toMatch(/^svc webhook needs an action[\s\S]*webhook create/);
    // a missing value or a stray argument: the command's usage
    expect(usage('org', 'create', '--name')).toMatch(/argument missing\nUsage: svc org create --name N\n/);
    expect(usage('org', 'create', '--name', 'x', 'extra')).toMatch(
      /Unexpected argument 'extra'[\s\S]*\nUsage: svc org create/,
    );
  });

  it('as a process: help on stdout with exit 0, the version, and usage errors on stderr with exit 2', async () => {
    const [help, cmdHelp, listenHelp, groupHelp, version, unknownOption, unknownCommand, bare] = await Promise.all([
      svc('help'),
      svc('help', 'webhook', 'create'),
      svc('listen', '--help'),
      svc('webhook', '--help'),
      svc('--version'),
      svc('webhook', 'create', '--rooom', 'x'),
      svc('webhok', 'create'),
      svc(),
    ]);
    for (const r of [help, cmdHelp, listenHelp, groupHelp, version]) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^Usage: svc <command> \[options\] \[--json\]$/m);
    expect(cmdHelp.stdout).toMatch(/^ {2}--room ROOM +the room whose events it receives/m);
    expect(listenHelp.stdout).toMatch(/^ {2}--forward-to URL +the local URL each event is POSTed to/m);
    expect(groupHelp.stdout).toMatch(/^ {2}webhook create +/m);
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
    expect(version.stdout).toBe(`${pkg.version}\n`);
    for (const r of [unknownOption, unknownCommand, bare]) expect([r.code, r.stdout]).toEqual([2, '']);
    expect(unknownOption.stderr).toMatch(
      /^Unknown option --rooom for svc webhook create\. Did you mean --room\?\nUsage: svc webhook create /,
    );
    expect(unknownCommand.stderr).toMatch(/^Unknown command: svc webhok create\. Did you mean: svc webhook create\?/);
    expect(bare.stderr).toMatch(/^ {2}org create +/m);
  });
});
