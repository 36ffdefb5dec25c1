import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { startAuthProxy } from './conformanceProxy.js';

const run = promisify(execFile);
const CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');

/**
 * The server scenarios of the official suite (`@modelcontextprotocol/conformance`) that apply to svc. The
 * others need the reference server's own tools (`test_simple_text`, `test_image_content`, …), prompts,
 * logging, completions or resource subscriptions, which svc does not offer: README "MCP conformance".
 */
const APPLICABLE = [
  'server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection', 'server-sse-multiple-streams', 'server-sse-polling',
];

interface Check { id: string; status: string; errorMessage?: string }

describe('the official MCP conformance suite against /mcp', () => {
  it('passes every applicable server scenario', { timeout: 240_000 }, async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // the suite connects without credentials: the proxy adds the API key (and nothing else)
    await using proxy = await startAuthProxy(t.baseUrl, w.key);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-'));
    try {
      const failures: string[] = [];
      for (const scenario of APPLICABLE) {
        const dir = path.join(out, scenario);
        // the CLI's exit code is 1 on any failure; the checks it saved say which
        await run(process.execPath, [CLI, 'server', '--url', proxy.url, '--scenario', scenario, '-o', dir], { timeout: 120_000 }).catch(() => undefined);
        const files = fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('checks.json'));
        expect(files, scenario).toHaveLength(1);
        const checks = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8')) as Check[];
        expect(checks.length, scenario).toBeGreaterThan(0);
        for (const c of checks) if (c.status === 'FAILURE') failures.push(`${scenario}/${c.id}: ${c.errorMessage ?? ''}`);
      }
      expect(failures).toEqual([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
