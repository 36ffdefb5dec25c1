import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildToolCatalog, IDEMPOTENCY_KEY_RULES } from '../../mcp/tools/toolCatalog.js';
import { isAppOnly } from '../../mcp/apps/catalog.js';
import { toToolSchema } from '../../mcp/tools/toolSchema.js';
import { listFieldsOf } from '../../mcp/tools/toolText.js';
import { buildOpenApiDocument } from '../../rest/openapi.js';
import {
  absurdHeaderValue,
  deepJsonText,
  flawedObject,
  junkJson,
  nastyString,
  shortNastyString,
  valueFor,
  type Schema,
} from './fuzzValues.js';
import { envelopeProblem, fuzzParams, startFuzzWorld, type FuzzWorld } from './fuzzWorld.js';

// Fuzzing MCP: every tool, called with arguments generated from its inputSchema (valid ones, flawed
// ones, and no object at all), answers a tool result (`isError` with the REST envelope for bad input) or a
// JSON-RPC error, never an HTTP 5xx; so does any JSON-RPC message. The database stays intact.

const RUNS_PER_TOOL = 35;
const TOOLS = Object.values(
  buildOpenApiDocument('http://localhost').paths as Record<string, Record<string, Schema>>,
).flatMap((ops) =>
  // (an operation without x-mcp-tool is REST only: the event stream, whose MCP side is subscriptions/listen)
  Object.values(ops).flatMap((op) => (op['x-mcp-tool'] ? [op.operationId as string] : [])),
);
/** What /mcp may refuse at the HTTP level: bad JSON, credential, scope, Origin, method, size, media type, rate. */
const HTTP_REFUSALS = new Set([400, 401, 403, 404, 405, 406, 413, 415, 429]);

interface McpPost {
  text: string;
  headers: Record<string, string>;
}

const withShow = (p: McpPost): McpPost =>
  Object.assign(p, {
    [fc.toStringMethod]: () =>
      `headers=${JSON.stringify(p.headers).slice(0, 200)} body=${p.text.slice(0, 400)}${p.text.length > 400 ? `… (${p.text.length} chars)` : ''}`,
  });

async function post(w: FuzzWorld, p: McpPost) {
  const res = await w.t.fetch('/mcp', {
    method: 'POST',
    headers: p.headers,
    body: p.text,
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let messages: any[] = [];
  try {
    if (type.includes('text/event-stream')) {
      messages = text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)));
    } else if (text) {
      const body = JSON.parse(text);
      messages = Array.isArray(body) ? body : [body];
    }
  } catch {
    messages = [Symbol('unparseable')];
  }
  return { status: res.status, headers: res.headers, text, messages };
}

/** What is wrong with one JSON-RPC answer to a tools/call (a tool result or an error), or null. */
function answerProblem(m: any): string | null {
  if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return 'not a JSON-RPC message';
  if (m.method === 'notifications/progress') return null;
  if (m.error)
    return typeof m.error.code === 'number' && typeof m.error.message === 'string' ? null : 'malformed JSON-RPC error';
  const r = m.result;
  if (!r || !Array.isArray(r.content)) return 'a result without content';
  if (r.isError) return envelopeProblem(JSON.parse(r.content[0].text), r._meta?.['svc/requestId'] ?? null);
  return null;
}

const headersFor = (w: FuzzWorld) =>
  fc
    .record({
      auth: fc.oneof(
        { weight: 10, arbitrary: fc.constant(w.a.key) },
        { weight: 3, arbitrary: fc.constant(w.memberKey) },
        { weight: 1, arbitrary: fc.constantFrom(...w.limitedKeys) },
        { weight: 1, arbitrary: absurdHeaderValue.map((v) => `svc_live_${v}`) },
      ),
      accept: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json, text/event-stream') },
        { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html') },
      ),
      version: fc.oneof(
        { weight: 8, arbitrary: fc.constant('2025-11-25') },
        { weight: 1, arbitrary: fc.constantFrom('2024-11-05', '2025-06-18', '1999-01-01', 'x') },
      ),
    })
    .map(({ auth, accept, version }) => ({
      authorization: `Bearer ${auth}`,
      'content-type': 'application/json',
      accept,
      'mcp-protocol-version': version,
    }));

describe('MCP tools/call fuzzing', () => {
  let w: FuzzWorld;
  const schemas = new Map<string, Schema>();
  /** Per tool: how its calls ended (ok, tool error, JSON-RPC error, or the HTTP status of a refusal). */
  const seen: Record<string, Set<string>> = {};
  beforeAll(async () => {
    w = await startFuzzWorld();
    const list = await post(w, {
      text: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: {
        authorization: `Bearer ${w.a.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    });
    for (const tool of list.messages[0].result.tools)
      schemas.set(tool.name, withFullSchema(tool.name, tool.inputSchema));
    listed.push(...schemas.keys());
    // tools listed to an agent run's own delegated token only (complete_agent_run), or to a client of MCP Apps
    // only (a view's own tool): called all the same
    for (const tool of runOnly) schemas.set(tool.name, withFullSchema(tool.name, tool.inputSchema));
  });
  const listed: string[] = [];
  const runOnly = [...buildToolCatalog().values()]
    .filter((e) => e.proc.meta.runOnly || isAppOnly(e.tool.name))
    .map((e) => e.tool);
  // the listed schema is compact for a model (no patterns nor examples); arguments are generated from the full one,
  // whose id patterns name real objects, with the tool's own arguments (idempotencyKey, fields) beside
  const catalog = buildToolCatalog();
  const withFullSchema = (name: string, listedSchema: Schema): Schema => {
    const proc = catalog.get(name)!.proc;
    const full = toToolSchema(proc.input, 'input', { compact: false }) as Schema;
    const fields = listFieldsOf(proc);
    // `fields` as the grammar it accepts: comma-separated item fields
    const fieldsSchema = fields
      ? { fields: { type: 'string', pattern: `^(${fields.join('|')})(,(${fields.join('|')}))*$` } }
      : {};
    const key =
      'idempotencyKey' in (listedSchema.properties ?? {})
        ? { idempotencyKey: { type: 'string', ...IDEMPOTENCY_KEY_RULES } }
        : {};
    return { ...full, properties: { ...listedSchema.properties, ...full.properties, ...fieldsSchema, ...key } };
  };
  afterAll(async () => {
    await w?.close();
  });

  it('tools/list offers every operation of the OpenAPI document as a tool', () => {
    expect([...listed].sort()).toEqual(TOOLS.filter((t) => !runOnly.some((r) => r.name === t)).sort());
  });

  it.each(TOOLS)(
    '%s: generated arguments get a tool result or a JSON-RPC error, never an HTTP 5xx',
    { timeout: 60_000 },
    async (name) => {
      await w.refresh();
      const schema = schemas.get(name)!;
      const o = { ids: w.ids };
      const props: Record<string, Schema> = schema.properties ?? {};
      // arguments whose ids all name world A's objects, so the call can succeed
      const coherent = fc.record(
        Object.fromEntries(
          Object.entries(props).map(([k, s]) => {
            const prefix = /^\^([a-z]+)_/.exec(s.pattern ?? '')?.[1];
            return [k, prefix && w.sandbox[prefix] ? fc.constantFrom(...w.sandbox[prefix]) : valueFor(s, o)];
          }),
        ),
        { requiredKeys: (schema.required ?? []).filter((k: string) => k in props) },
      );
      const args = fc.oneof(
        { weight: 4, arbitrary: coherent },
        { weight: 2, arbitrary: valueFor(schema, o) },
        { weight: 3, arbitrary: flawedObject(schema, o) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(coherent, fc.oneof(absurdHeaderValue, junkJson))
            .map(([a, k]) => ({ ...(a as object), idempotencyKey: k })),
        },
        { weight: 1, arbitrary: junkJson },
      );
      const message = fc.oneof(
        {
          weight: 8,
          arbitrary: args.map((a) =>
            JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: a } }),
          ),
        },
        {
          weight: 1,
          arbitrary: args.map((a) =>
            JSON.stringify({
              jsonrpc: '2.0',
              id: 'p',
              method: 'tools/call',
              params: { name, arguments: a, _meta: { progressToken: 'p1' } },
            }),
          ),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.integer({ min: 33, max: 3000 }), fc.constantFrom('array' as const, 'object' as const))
            .map(
              ([d, k]) =>
                `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"${name}","arguments":{"x":${deepJsonText(d, k)}}}}`,
            ),
        },
      );
      await fc.assert(
        fc.asyncProperty(fc.record({ text: message, headers: headersFor(w) }).map(withShow), async (p) => {
          const r = await post(w, p);
          const fail = (why: string) => new Error(`${why}\n  answer: ${r.status} ${r.text.slice(0, 400)}`);
          if (r.status >= 500) throw fail('server error');
          if (r.status >= 400) {
            (seen[name] ??= new Set()).add(String(r.status));
            if (!HTTP_REFUSALS.has(r.status)) throw fail(`unexpected status ${r.status}`);
            const m = r.messages[0];
            if (!(m?.error && typeof m.error.code === 'number') && envelopeProblem(m, r.headers.get('x-request-id')))
              throw fail('refusal is neither a JSON-RPC error nor the envelope');
            return;
          }
          if (!r.messages.length) throw fail('no answer');
          for (const m of r.messages) {
            const problem = answerProblem(m);
            if (problem) throw fail(problem);
            (seen[name] ??= new Set()).add(
              m.error ? 'rpc-error' : m.result?.isError ? 'tool-error' : m.result ? 'ok' : 'other',
            );
          }
        }),
        fuzzParams(RUNS_PER_TOOL, `mcp:${name}`),
      );
    },
  );

  it('reached the tools: every one refused bad arguments, and nearly every one succeeded too', () => {
    const summary = JSON.stringify(
      Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...v].sort().join(',')])),
      null,
      1,
    );
    for (const name of TOOLS) expect(seen[name]?.has('tool-error'), `${name}: ${summary}`).toBe(true);
    expect(TOOLS.filter((name) => seen[name]?.has('ok')).length, summary).toBeGreaterThanOrEqual(
      Math.floor(TOOLS.length * 0.85),
    );
  });

  it(
    'any JSON-RPC message, batch or notification gets a JSON-RPC answer or a clean refusal, never a 5xx',
    { timeout: 60_000 },
    async () => {
      const method = fc.constantFrom(
        'initialize',
        'tools/list',
        'tools/call',
        'ping',
        'resources/list',
        'prompts/get',
        'logging/setLevel',
        'notifications/initialized',
        'notifications/cancelled',
        '',
        'rpc.discover',
      );
      const id = fc.oneof(
        fc.integer(),
        shortNastyString,
        fc.constantFrom(null, 1.5, -0, { a: 1 }, [1], true, 'x'.repeat(5000)),
      );
      const msg = fc.record(
        {
          jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: junkJson }),
          id,
          method: fc.oneof({ weight: 4, arbitrary: method }, { weight: 1, arbitrary: nastyString }),
          params: junkJson,
        },
        { requiredKeys: ['jsonrpc', 'method'] },
      );
      const body = fc.oneof(
        { weight: 5, arbitrary: msg.map((m) => JSON.stringify(m)) },
        { weight: 2, arbitrary: fc.array(msg, { minLength: 0, maxLength: 4 }).map((ms) => JSON.stringify(ms)) },
        { weight: 1, arbitrary: junkJson.map((j) => JSON.stringify(j)) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '',
            '{',
            'null',
            '[]',
            '\uFEFF{}',
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deepJsonText(5000, 'array')}}`,
          ),
        },
      );
      const contentType = fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'text/plain',
            'application/json; charset=latin1',
            '',
            'application/x-www-form-urlencoded',
          ),
        },
      );
      await fc.assert(
        fc.asyncProperty(
          fc
            .record({ text: body, headers: headersFor(w), contentType })
            .map(({ text, headers, contentType: ct }) =>
              withShow({ text, headers: { ...headers, 'content-type': ct } }),
            ),
          async (p) => {
            const r = await post(w, p);
            if (r.status >= 500) throw new Error(`server error: ${r.status} ${r.text.slice(0, 400)}`);
            if (r.status >= 400 && !HTTP_REFUSALS.has(r.status))
              throw new Error(`unexpected status ${r.status}: ${r.text.slice(0, 400)}`);
            if (r.status !== 202 && r.messages.some((m) => typeof m === 'symbol'))
              throw new Error(`unparseable answer ${r.status}: ${r.text.slice(0, 400)}`);
          },
        ),
        fuzzParams(300, 'mcp:jsonrpc'),
      );
    },
  );

  it('leaves the database intact', async () => {
    const r = await w.verifyIntact();
    expect(r.problems).toEqual([]);
    expect(r.countsAfter).toEqual(r.countsBefore);
    expect(r.witnessAfter).toEqual(r.witnessBefore);
  });
});
