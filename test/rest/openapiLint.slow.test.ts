import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/harness.js';

// The served document passes the linters API consumers run, `@redocly/cli lint` (recommended) and
// Spectral (`spectral:oas`), with the repository's redocly.yaml and .spectral.yaml (each rule turned off there
// says why). Both CLIs run as child processes on this Node, with JSON output.

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const bin = (pkg: string, rel: string) =>
  path.join(path.dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), rel);

async function servedDocument(): Promise<string> {
  // a deployment's own address (the default BASE_URL, localhost, is what the server-URL rule warns about)
  await using t = await startTestServer({ env: { BASE_URL: 'https://svc.acme.test' } });
  const text = await (await t.fetch('/v1/openapi.json')).text();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, text);
  return file;
}

/** Runs a linter; a non-zero exit with a report is a finding, not a crash, so the report is read either way. */
async function lint(args: string[]): Promise<string> {
  try {
    // no telemetry, no update check: the tests make no outbound connection
    const env = {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      SCARF_ANALYTICS: 'false',
      DO_NOT_TRACK: '1',
    };
    return (await run(process.execPath, args, { cwd: root, env, maxBuffer: 32 * 1024 * 1024, timeout: 120_000 }))
      .stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    if (e.stdout) return e.stdout;
    throw new Error(`linter failed: ${e.stderr ?? String(err)}`);
  }
}

describe('the OpenAPI document is lint clean', () => {
  it('redocly lint (recommended): no error, no warning', { timeout: 180_000 }, async () => {
    const file = await servedDocument();
    const out = await lint([
      bin('@redocly/cli', 'bin/cli.js'),
      'lint',
      file,
      '--config',
      path.join(root, 'redocly.yaml'),
      '--format',
      'json',
    ]);
    const report = JSON.parse(out.slice(out.indexOf('{'))) as {
      problems: { ruleId: string; severity: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('spectral lint (spectral:oas): no error, no warning', { timeout: 180_000 }, async () => {
    const file = await servedDocument();
    const out = await lint([
      bin('@stoplight/spectral-cli', 'dist/index.js'),
      'lint',
      file,
      '--ruleset',
      path.join(root, '.spectral.yaml'),
      '--format',
      'json',
      '--quiet',
    ]);
    // severities: 0 error, 1 warning, 2 info, 3 hint
    const results = JSON.parse(out.slice(out.indexOf('['))) as {
      code: string;
      severity: number;
      message: string;
      path: string[];
    }[];
    expect(results.filter((r) => r.severity <= 1).map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual(
      [],
    );
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
