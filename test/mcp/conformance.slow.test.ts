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
const CLI = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

/**
 * The server scenarios of the official suite (`@modelcontextprotocol/conformance`, every suite) that apply to
 * svc, per revision: each must run checks and pass them all, but for the named checks, which need the
 * reference server's diagnostic tools or a feature svc does not offer (docs/mcp.md "Conformance"). Every
 * other scenario is listed in NOT_APPLICABLE with its reason there; a scenario the suite adds fails this
 * test until it is sorted into one of the two.
 */
const APPLICABLE: Record<string, Record<string, string[]>> = {
  '2025-11-25': {
    'server-initialize': [],
    ping: [],
    'tools-list': [],
    'resources-list': [],
    'dns-rebinding-protection': [],
  },
  '2026-07-28': {
    'server-stateless': [
      'sep-2575-server-rejects-undeclared-capability',
      'sep-2575-missing-capability-http-400',
      'sep-2575-http-server-no-independent-requests-on-stream',
      'sep-2575-server-no-log-without-loglevel',
    ],
    caching: ['sep-2549-prompts-list-caching-hints'],
    'tools-list': [],
    'resources-list': [],
    'sep-2164-resource-not-found': [],
    'dns-rebinding-protection': [],
    'http-header-validation': [],
    'server-sse-multiple-streams': [],
    'input-required-result-missing-input-response': [],
    'input-required-result-unsupported-methods': [],
    'input-required-result-ignore-extra-params': [],
    'input-required-result-validate-input': [],
  },
};

/**
 * Scenarios that need what svc does not have: the reference server's tools, prompts (completion-complete completes a
 * prompt's argument), logging, subscriptions, sessions.
 */
const NOT_APPLICABLE = [
  'server-session-lifecycle',
  'server-sse-polling',
  'logging-set-level',
  'completion-complete',
  'json-schema-2020-12',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'http-custom-header-server-validation',
  'input-required-result-basic-elicitation',
  'input-required-result-basic-sampling',
  'input-required-result-basic-list-roots',
  'input-required-result-request-state',
  'input-required-result-multiple-input-requests',
  'input-required-result-multi-round',
  'input-required-result-non-tool-request',
  'input-required-result-result-type',
  'input-required-result-tampered-state',
  'input-required-result-capability-check',
  // the 2025-11-25 run of a scenario that only applies on 2026-07-28 (it opens no stream of its own there)
  'server-sse-multiple-streams@2025-11-25',
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

describe('the official MCP conformance suite against /mcp', () => {
  it.each(Object.keys(APPLICABLE))(
    'passes every applicable server scenario of %s',
    { timeout: 300_000 },
    async (version) => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      // the suite connects without credentials: the proxy adds the API key (and nothing else)
      await using proxy = await startAuthProxy(t.baseUrl, w.key);
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-'));
      try {
        // the CLI's exit code is 1 on any failure; the checks it saved say which
        await run(
          process.execPath,
          [CLI, 'server', '--url', proxy.url, '--suite', 'all', '--spec-version', version, '-o', out],
          {
            timeout: 240_000,
            maxBuffer: 64 * 1024 * 1024,
          },
        ).catch(() => undefined);
        const checks = new Map<string, Check[]>();
        for (const dir of fs.readdirSync(out)) {
          const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
          const file = fs
            .readdirSync(path.join(out, dir), { recursive: true })
            .map(String)
            .find((f) => f.endsWith('checks.json'));
          checks.set(scenario, file ? (JSON.parse(fs.readFileSync(path.join(out, dir, file), 'utf8')) as Check[]) : []);
        }
        const applicable = APPLICABLE[version];
        const failures: string[] = [];
        for (const [scenario, allowed] of Object.entries(applicable)) {
          const got = checks.get(scenario);
          if (!got) {
            failures.push(`${scenario}: did not run`);
            continue;
          }
          // a scenario whose checks never ran passes nothing
          if (!got.some((c) => c.status === 'SUCCESS')) failures.push(`${scenario}: no check ran`);
          for (const c of got)
            if (c.status === 'FAILURE' && !allowed.includes(c.id))
              failures.push(`${scenario}/${c.id}: ${c.errorMessage ?? ''}`);
        }
        expect(failures).toEqual([]);
        const unsorted = [...checks.keys()].filter(
          (s) => !(s in applicable) && !NOT_APPLICABLE.includes(s) && !NOT_APPLICABLE.includes(`${s}@${version}`),
        );
        expect(unsorted, 'scenarios neither applicable nor listed as not applicable').toEqual([]);
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    },
  );
});
