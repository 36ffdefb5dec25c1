import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { invokerKey } from '../agents/helpers.js';
import { startAuthProxy } from './conformanceProxy.js';

const run = promisify(execFile);
const CLI = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

/**
 * The tasks extension's negotiation scenario of the official suite (an extension scenario: run with `--force`). Its
 * other checks call the reference server's `slow_compute` tool, which svc does not have.
 */
describe('the official conformance suite: tasks extension negotiation', () => {
  it('refuses task methods of a client that did not declare the extension (-32021)', { timeout: 120_000 }, async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using proxy = await startAuthProxy(t.baseUrl, await invokerKey(t.rt, w));
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-tasks-'));
    try {
      await run(
        process.execPath,
        [
          CLI,
          'server',
          '--url',
          proxy.url,
          '--scenario',
          'tasks-capability-negotiation',
          '--spec-version',
          '2026-07-28',
          '--force',
          '-o',
          out,
        ],
        { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      ).catch(() => undefined);
      const file = fs
        .readdirSync(out, { recursive: true })
        .map(String)
        .find((f) => f.endsWith('checks.json'));
      expect(file, 'the scenario saved its checks').toBeDefined();
      const checks = JSON.parse(fs.readFileSync(path.join(out, file!), 'utf8')) as { id: string; status: string }[];
      const status = Object.fromEntries(checks.map((c) => [c.id, c.status]));
      expect(status).toMatchObject({
        'tasks-extension-advertised': 'SUCCESS',
        'sep-2663-tasks-methods-non-declaring': 'SUCCESS',
      });
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
