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
    'input-required-result-unsupported-methods': [],
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
  // their one real check calls the reference server's input-required tool (`Unknown tool` here): what is left is a
  // warning, or a pass on the error the unknown tool gives, and the wire check
  'input-required-result-missing-input-response',
  'input-required-result-ignore-extra-params',
  'input-required-result-validate-input',
  // svc answers each POST with JSON (SSE is optional), so no stream is opened and the stream check does not run
  'server-sse-multiple-streams',
];

/** The check every scenario ends with: the messages were valid JSON-RPC. It says nothing of the scenario itself. */
const WIRE_CHECK = 'wire-schema-valid';

/**
 * A check that tested something: not the wire check, and not one that "passed" on the error an unknown tool gives
 * (the reference server's tool is not there, so nothing was exercised).
 */
const isRealPass = (c: Check) =>
  c.status === 'SUCCESS' && c.id !== WIRE_CHECK && !JSON.stringify(c.details ?? {}).includes('Unknown tool');

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`), run scenario by scenario (`--suite all` runs no
 * extension): the checks that must pass. Every other check of these scenarios calls the reference server's task
 * tools (`slow_compute`, `greet`, `failing_job`, `confirm_delete`, …) or needs a task they create, and is listed
 * in docs/mcp.md as such.
 */
const TASKS_PASSING: Record<string, string[]> = {
  'tasks-capability-negotiation': ['tasks-extension-advertised', 'sep-2663-tasks-methods-non-declaring'],
  'tasks-request-headers': ['tasks-headers-reject-mismatched-method'],
  'tasks-dispatch-and-envelope': [
    'sep-2663-tasks-result-removed-method-not-found',
    'tasks-removed-tasks-list',
    'sep-2663-tasks-get-invalid-task-id-32602',
  ],
};
const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: unknown;
}

/** Runs the suite's CLI to its end (its exit code is 1 on any failure) and reads the checks it saved, by scenario. */
async function conformance(args: string[]): Promise<Map<string, Check[]>> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-'));
  try {
    await run(process.execPath, [CLI, ...args, '-o', out], { timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }).catch(
      () => undefined,
    );
    const checks = new Map<string, Check[]>();
    for (const dir of fs.readdirSync(out)) {
      const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
      const file = fs
        .readdirSync(path.join(out, dir), { recursive: true })
        .map(String)
        .find((f) => f.endsWith('checks.json'));
      checks.set(scenario, file ? (JSON.parse(fs.readFileSync(path.join(out, dir, file), 'utf8')) as Check[]) : []);
    }
    return checks;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
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
      const checks = await conformance(['server', '--url', proxy.url, '--suite', 'all', '--spec-version', version]);
      const applicable = APPLICABLE[version];
      const failures: string[] = [];
      for (const [scenario, allowed] of Object.entries(applicable)) {
        const got = checks.get(scenario);
        if (!got) {
          failures.push(`${scenario}: did not run`);
          continue;
        }
        // a scenario passes on what it tested: the wire check alone, or a pass on an unknown tool, is nothing
        if (!got.some(isRealPass)) failures.push(`${scenario}: no real check passed`);
        for (const c of got)
          if ((c.status === 'FAILURE' || c.status === 'WARNING') && !allowed.includes(c.id))
            failures.push(`${scenario}/${c.id}: ${c.status} ${c.errorMessage ?? ''}`);
      }
      expect(failures).toEqual([]);
      const unsorted = [...checks.keys()].filter(
        (s) => !(s in applicable) && !NOT_APPLICABLE.includes(s) && !NOT_APPLICABLE.includes(`${s}@${version}`),
      );
      expect(unsorted, 'scenarios neither applicable nor listed as not applicable').toEqual([]);
    },
  );

  it(
    "passes the checks of the tasks extension that do not need the reference server's task tools",
    { timeout: 300_000 },
    async () => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      await using proxy = await startAuthProxy(t.baseUrl, w.key);
      const failures: string[] = [];
      for (const scenario of TASKS_SCENARIOS) {
        const got = (await conformance(['server', '--url', proxy.url, '--scenario', scenario])).get(scenario) ?? [];
        for (const id of TASKS_PASSING[scenario] ?? []) {
          const c = got.find((x) => x.id === id);
          if (!c || !isRealPass(c))
            failures.push(`${scenario}/${id}: ${c?.status ?? 'did not run'} ${c?.errorMessage ?? ''}`);
        }
        // every other check that failed names a reference tool (a tools/call of one answers -32602, unknown tool) or
        // a task one of them would have created
        for (const c of got)
          if (
            c.status === 'FAILURE' &&
            !/Unknown tool|no task was created|fixture .* unavailable|tools\/call for \w+ returned error code -32602/.test(
              c.errorMessage ?? '',
            )
          )
            failures.push(`${scenario}/${c.id}: ${c.errorMessage ?? ''}`);
      }
      expect(failures).toEqual([]);
    },
  );

  it(
    "passes the authorization server's metadata scenario (the `authorization` command)",
    { timeout: 120_000 },
    async () => {
      await using t = await startTestServer();
      const checks = await conformance([
        'authorization',
        '--url',
        t.baseUrl,
        '--scenario',
        'authorization-server-metadata-endpoint',
      ]);
      const got = [...checks.values()].flat();
      expect(
        got
          .filter(isRealPass)
          .map((c) => c.id)
          .sort(),
      ).toEqual(['authorization-server-metadata', 'authorization-server-metadata-cimd']);
      expect(got.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')).toEqual([]);
    },
  );
});
