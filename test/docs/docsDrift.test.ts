import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../rest/openapi.js';
import { commands } from '../../src/cli/commands/index.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { buildToolCatalog, toolsFor } from '../../mcp/tools/toolCatalog.js';
import { isAppOnly } from '../../mcp/apps/catalog.js';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { checkCommands, checkEnvVariables, checkLinks, checkOperations, type Doc, docsIn } from './docsDrift.js';
import { checkBlockMarkers, checkBlockVariables, shellVariablesSet } from './guideBlocks.js';

// The guides cannot drift from the code: links resolve, the variables they name are the configuration's (and each
// of the configuration's is documented), the `svc` commands they show exist with the options they use, and the REST
// guide's table lists exactly the operations of the OpenAPI document. Each check is a pure function of the texts
// (docsDrift.ts), so the cases below also prove that each one fails when it should.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (rel: string): Doc => ({ file: rel, text: readFileSync(path.join(ROOT, rel), 'utf8') });
const exists = (rel: string) => existsSync(path.join(ROOT, rel));

/** README.md, SECURITY.md and every guide under docs/. */
const DOCS: Doc[] = [
  'README.md',
  'SECURITY.md',
  ...docsIn(readdirSync(path.join(ROOT, 'docs'), { recursive: true }) as string[]),
].map(read);
const GUIDES = [
  'rest-api',
  'mcp',
  'oauth',
  'webhooks',
  'agents',
  'cli',
  'configuration',
  'operations',
  'security-model',
  'architecture',
  'contributing',
].map((n) => `docs/${n}.md`);

/**
 * Variables the guides may name that are not the server's configuration: each with the file that reads it, which
 * must still mention it (so this list cannot outlive what it excuses).
 */
const OTHER_VARIABLES: Record<string, string> = {
  SVC_URL: 'src/cli/remote/apiClient.ts', // svc listen / svc trigger: the server to call
  SVC_API_KEY: 'src/cli/remote/apiClient.ts', // svc listen / svc trigger: the key to call it with
  SVC_NODE_CACHE: 'scripts/node.sh', // where scripts/node.sh keeps the Node it installs
  MALLOC_ARENA_MAX: 'scripts/serve.mjs', // set by the start script unless the environment sets it
  TEST_PG_URL: 'vitest.config.ts', // the PostgreSQL of npm run test:all
  FUZZ_SEED: 'test/robustness/fuzzWorld.ts', // replays a fuzz run
  FUZZ_RUNS: 'test/robustness/fuzzWorld.ts',
  SOAK_SECONDS: 'test/robustness/soak.slow.test.ts',
  SVC_EXPECT_NODE_MAJOR: 'test/runtime/provisioning.test.ts', // set by .ci/run: the Node major each leg must run on
  WEBHOOK_SECRETS: 'examples/webhook-receiver.ts',
  CONNECTOR_SECRETS: 'examples/agent-connector.ts',
  STANDARD_WEBHOOK_SECRET: 'docs/webhooks.md', // read by the Standard Webhooks receiver snippets of that guide
  USER_ID: 'test/docs/guideBlocks.ts', // the demo user, which a reader keeps beside SVC_API_KEY and ROOM
  // standard OpenTelemetry variables the SDK reads itself
  OTEL_SERVICE_NAME: 'node_modules/@opentelemetry/resources/dist/detectors/EnvDetector.mjs',
  OTEL_RESOURCE_ATTRIBUTES: 'node_modules/@opentelemetry/resources/dist/detectors/EnvDetector.mjs',
  OTEL_EXPORTER_OTLP_HEADERS:
    'node_modules/@opentelemetry/otlp-exporter-base/dist/platform/node/configuration/otlp-node-http-env-configuration.mjs',
};

/** Commands src/cli/main.ts answers before its registry. */
const BUILTIN_COMMANDS = ['help'];

const REGISTRY = commands.map((c) => ({ name: c.name, options: Object.keys(c.options) }));

function operations() {
  const doc = buildOpenApiDocument('http://localhost') as unknown as {
    paths: Record<string, Record<string, { operationId: string; security?: Record<string, string[]>[] }>>;
  };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path: p,
      operationId: op.operationId,
      scopes: [...new Set((op.security ?? []).flatMap((s) => Object.values(s).flat()))],
    })),
  );
}

describe('the guides', () => {
  it('are all there, and README.md links each of them', () => {
    for (const g of GUIDES) expect(exists(g), g).toBe(true);
    const readme = DOCS.find((d) => d.file === 'README.md')!.text;
    for (const g of GUIDES) expect(readme, `README.md links ${g}`).toContain(`](${g})`);
  });

  it('README.md stays a five-minute read (at most 150 lines)', () => {
    expect(DOCS.find((d) => d.file === 'README.md')!.text.split('\n').length).toBeLessThanOrEqual(150);
  });

  it('every relative link resolves, anchors included', () => {
    expect(checkLinks(DOCS, exists, read)).toEqual([]);
  });

  it('every environment variable they name is read, and every configuration variable is documented', () => {
    const stale = Object.entries(OTHER_VARIABLES).filter(
      ([name, file]) => !exists(file) || !read(file).text.includes(name),
    );
    expect(stale, 'OTHER_VARIABLES entries whose file no longer reads them').toEqual([]);
    // and the shell variables the guides' own commands set (AGENT_KEY=$(npx svc key create …))
    expect(
      checkEnvVariables(DOCS, CONFIG_VARIABLES, [...Object.keys(OTHER_VARIABLES), ...shellVariablesSet(DOCS)]),
    ).toEqual([]);
  });

  it('every svc command they show exists, with the options it takes', () => {
    expect(checkCommands(DOCS, REGISTRY, BUILTIN_COMMANDS)).toEqual([]);
  });

  it('every sh block runs as pasted, or says why it cannot here; the variables it uses are set in the guide', () => {
    const shown = DOCS.filter((d) => d.file === 'README.md' || d.file.startsWith('docs/'));
    expect(checkBlockMarkers(shown)).toEqual([]);
    expect(checkBlockVariables(shown)).toEqual([]);
  });

  it("the tool count and the tokens of tools/list that the MCP guide gives are the code's", () => {
    // (as a client without MCP Apps lists them: a view's own tool is listed to a client of the extension only)
    const tools = toolsFor(buildToolCatalog(), SCOPES).filter((t) => !isAppOnly(t.name));
    const tokens = encode(JSON.stringify({ tools })).length;
    const text = read('docs/mcp.md').text.replace(/\s+/g, ' ');
    const m = /sees all of them \((\d+), about ([\d,]+) tokens of `tools\/list`/.exec(text);
    expect(m, 'docs/mcp.md: "sees all of them (N, about T tokens of `tools/list` …"').not.toBeNull();
    expect(Number(m![1]), 'the number of tools a key with every scope lists').toBe(tools.length);
    // "about": within 5 % of the measured figure, rounded to the hundred in the guide
    const said = Number(m![2].replace(/,/g, ''));
    expect(Math.abs(said - tokens) / tokens, `docs/mcp.md says ${said} tokens, tools/list is ${tokens}`).toBeLessThan(
      0.05,
    );
  });

  it("the REST guide's table lists every operation of the OpenAPI document, with its tool name and scope, and no other", () => {
    expect(checkOperations(read('docs/rest-api.md'), operations())).toEqual([]);
  });
});

describe('the drift checks fail when they should', () => {
  const doc = (file: string, text: string): Doc => ({ file, text });
  const none = () => false;

  it('a broken link, a missing anchor', () => {
    const docs = [doc('README.md', '# Title\n\nSee [the guide](docs/nope.md), [here](#title), [gone](#nowhere).\n')];
    expect(checkLinks(docs, none, read)).toEqual([
      'README.md: link to docs/nope.md: no such file',
      'README.md: link to #nowhere: no heading "nowhere" in README.md',
    ]);
  });

  it('links inside code are not links', () => {
    expect(checkLinks([doc('README.md', '`[a](nope.md)`\n\n```md\n[b](nope.md)\n```\n')], none, read)).toEqual([]);
  });

  it('an undocumented configuration variable, an unknown one', () => {
    const docs = [
      doc(
        'docs/configuration.md',
        '| `PORT`, `HOST` | 3000 |\n\nSet `SVC_NO_SUCH_THING=1`, or `SVC_SECRET` (no row).\n',
      ),
    ];
    expect(checkEnvVariables(docs, ['PORT', 'HOST', 'SVC_SECRET'], [])).toEqual([
      'docs/configuration.md names SVC_NO_SUCH_THING, which no configuration reads',
      'SVC_SECRET (src/config.ts) is not in docs/configuration.md',
    ]);
  });

  it('an unknown command, an unknown option', () => {
    const registry = [
      { name: 'org create', options: ['name'] },
      { name: 'worker', options: [] },
    ];
    const docs = [
      doc(
        'docs/cli.md',
        '```sh\nnpx svc org create --name A --json\nnpx svc org delete --id o\nnpx svc worker --fast\n```\n\nRun `svc worker`.\n',
      ),
    ];
    expect(checkCommands(docs, registry, [])).toEqual([
      'docs/cli.md: svc org delete: no such command',
      'docs/cli.md: svc worker: no option --fast',
    ]);
  });

  it('an sh block with a placeholder, the fixed server address, an unknown marker; a variable never set', () => {
    const guide = doc(
      'docs/x.md',
      [
        '```sh',
        'export SVC_URL=http://localhost:3000 SVC_API_KEY=svc_test_… ROOM=room_…',
        'curl $SVC_URL/v1/rooms/$ROOM -H "Authorization: Bearer $SVC_API_KEY"',
        '```',
        '',
        '```sh',
        'curl http://localhost:3000/v1/rooms/room_…/tasks -H "Authorization: Bearer $KEY"   # comment…',
        '```',
        '',
        '<!-- not-runnable: another machine -->',
        '```sh',
        'curl https://svc.example.com/v1/me -H "Authorization: Bearer $TOKEN"',
        '```',
        '',
        '<!-- runnable later -->',
        '```sh',
        'WH=$(echo wh_1) && echo "$WH"',
        '```',
      ].join('\n'),
    );
    expect(checkBlockMarkers([guide])).toEqual([
      'docs/x.md:6: a placeholder (…) in a runnable block',
      "docs/x.md:6: the server's address instead of $SVC_URL",
      'docs/x.md:16: unknown marker <!-- runnable later -->',
    ]);
    expect(checkBlockVariables([guide])).toEqual(['docs/x.md:6: $KEY is used but the guide never sets it']);
  });

  it('an operation missing from the table, a row for no operation, a wrong tool name', () => {
    const ops = [
      { method: 'GET', path: '/v1/me', operationId: 'get_me', scopes: ['me:read'] },
      { method: 'GET', path: '/v1/rooms', operationId: 'list_rooms', scopes: ['rooms:read'] },
    ];
    const table = doc(
      'docs/rest-api.md',
      '| `GET /v1/me` | `get_me` | `me:read` |\n| `GET /v1/nope` | `nope` | `x` |\n',
    );
    expect(checkOperations(table, ops)).toEqual([
      'docs/rest-api.md: GET /v1/rooms (list_rooms) has no row in the table',
      'docs/rest-api.md: a row names GET /v1/nope, which the OpenAPI document does not have',
    ]);
    const wrong = doc(
      'docs/rest-api.md',
      '| `GET /v1/me` | `get_user` | `me:read` |\n| `GET /v1/rooms` | `list_rooms` | `rooms:write` |\n',
    );
    expect(checkOperations(wrong, ops)).toEqual([
      'docs/rest-api.md: the row of GET /v1/me does not name its tool get_me',
      'docs/rest-api.md: the row of GET /v1/rooms does not name its scope rooms:read',
    ]);
  });
});
