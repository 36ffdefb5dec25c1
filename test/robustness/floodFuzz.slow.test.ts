import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationSnapshot } from './integrity.js';
import { fuzzParams, startFuzzWorld, type FuzzWorld } from './fuzzWorld.js';

// Penetration test 3, finding 3 (SECURITY.md "Penetration test 3: input bounds"), as a property of every tool and
// every /v1 operation, enumerated from the live tools/list and OpenAPI document (a new one is covered as it
// appears): a flood of unknown keys, up to and past the bound on members, answers a small validation_error (or a
// 413 past REST's 1 MiB), writes nothing, and the server still answers /healthz. A body at the cap proves the
// bound; no test needs the megabytes of the finding.

const RUNS = 6;
/** The largest answer to a flood: a few problems, each cut short. */
const SMALL = 4096;
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** How many unknown keys: a few, just under the bound on members, or past it (REST's 1 MiB included). */
const floodSize = fc.oneof(
  fc.integer({ min: 1, max: 40 }),
  fc.integer({ min: 9_000, max: 10_000 }),
  fc.integer({ min: 10_100, max: 45_000 }),
);
const flood = fc.record({
  n: floodSize,
  prefix: fc.string({ unit: 'grapheme', maxLength: 10 }).map((p) => `${p.replaceAll('\0', '')}_`),
  value: fc.constantFrom('0', '""', 'null', '{}', '[]', '"x"'),
});
type Flood = { n: number; prefix: string; value: string };
const members = (f: Flood) =>
  Array.from({ length: f.n }, (_, i) => `${JSON.stringify(`${f.prefix}${i}`)}:${f.value}`).join(',');

describe('unknown-key floods on every tool and every REST operation (penetration test 3)', () => {
  let w: FuzzWorld;
  beforeAll(async () => {
    w = await startFuzzWorld();
  });
  afterAll(async () => w?.close());

  const healthy = async () => expect((await w.t.fetch('/healthz')).status).toBe(200);

  it('MCP: every tool of tools/list answers a flood with a small validation_error and runs nothing', async () => {
    const post = async (text: string) => {
      const res = await w.t.fetch('/mcp', {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${w.a.key}` },
        body: text,
      });
      return { status: res.status, text: await res.text() };
    };
    const list = JSON.parse((await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')).text);
    const tools: string[] = list.result.tools.map((t: { name: string }) => t.name);
    expect(tools.length).toBeGreaterThan(30);
    const before = await organizationSnapshot(w.t.rt, w.a.orgId);
    for (const tool of tools) {
      await fc.assert(
        fc.asyncProperty(flood, async (f) => {
          const r = await post(
            `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{${members(f)}}}}`,
          );
          expect(r.text.length, `${tool}: ${f.n} keys`).toBeLessThan(SMALL);
          const body = JSON.parse(r.text);
          if (r.status === 400) {
            // past the bound: refused before the JSON is parsed, as a JSON-RPC error
            expect(body.error.message).toMatch(/more than \d+ members/);
          } else if (r.status === 413) {
            // past the body limit (SVC_MAX_UPLOAD_BYTES of the fuzz world, 64 KiB, as base64, and 1 MiB)
            expect(body.error.message).toMatch(/limited to \d+ bytes/);
          } else {
            expect(r.status, tool).toBe(200);
            expect(body.result.isError, tool).toBe(true);
            expect(JSON.parse(body.result.content[0].text).error.code, tool).toBe('validation_error');
          }
        }),
        fuzzParams(RUNS, `flood:${tool}`),
      );
      await healthy();
    }
    expect(await organizationSnapshot(w.t.rt, w.a.orgId)).toEqual(before);
  });

  it('REST: every operation of the OpenAPI document answers a flood (body or query) with a small validation_error', async () => {
    const doc: any = await (await w.t.fetch('/v1/openapi.json')).json();
    const ops = Object.entries<any>(doc.paths).flatMap(([path, o]) =>
      Object.entries<any>(o).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
    );
    expect(ops.length).toBeGreaterThan(30);
    const before = await organizationSnapshot(w.t.rt, w.a.orgId);
    for (const { path, method, op } of ops) {
      // path parameters naming the sandbox's own objects, so only the flood is wrong
      const concrete = path.replace(/\{(\w+)\}/g, (_m: string, name: string) => {
        const prefix =
          /^([a-z]+)_/.exec(resolveParam(doc, op, name)?.schema?.pattern?.replace(/^\^\(?/, '') ?? '')?.[1] ?? '';
        return w.sandbox[prefix]?.[0] ?? w.ids[prefix]?.[0] ?? 'x';
      });
      const jsonBody = !!op.requestBody?.content?.['application/json'];
      await fc.assert(
        fc.asyncProperty(flood, async (f) => {
          let url = concrete;
          let body: string | undefined;
          const headers: Record<string, string> = { authorization: `Bearer ${w.a.key}` };
          if (jsonBody) {
            body = `{${members(f)}}`;
            headers['content-type'] = 'application/json';
          } else {
            // a flood of unknown query parameters (bounded by the request head Node reads: 16 KiB)
            const params: string[] = [];
            for (let i = 0, size = 0; i < f.n && size < 8000; i++)
              size += params[params.push(`${encodeURIComponent(`${f.prefix}${i}`)}=1`) - 1].length + 1;
            url = `${concrete}?${params.join('&')}`;
            if (method === 'POST') {
              body = 'bytes';
              headers['content-type'] = 'text/plain';
            }
          }
          const res = await w.t.fetch(url, { method, headers, body });
          const text = await res.text();
          expect(text.length, `${method} ${path}: ${f.n}`).toBeLessThan(SMALL);
          expect([400, 413], `${method} ${path}: ${text.slice(0, 300)}`).toContain(res.status);
          expect(JSON.parse(text).error.code).toBe(res.status === 413 ? 'payload_too_large' : 'validation_error');
        }),
        fuzzParams(RUNS, `flood:${method} ${path}`),
      );
      await healthy();
    }
    expect(await organizationSnapshot(w.t.rt, w.a.orgId)).toEqual(before);
  });
});

function resolveParam(doc: any, op: any, name: string): any {
  for (const p of op.parameters ?? []) {
    const r = p.$ref
      ? p.$ref
          .split('/')
          .slice(1)
          .reduce((o: any, k: string) => o[k], doc)
      : p;
    if (r.name === name && r.in === 'path') return r;
  }
  return undefined;
}
