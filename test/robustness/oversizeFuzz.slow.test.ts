import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildToolCatalog } from '../../mcp/tools/toolCatalog.js';
import { valueFor, type Schema } from './fuzzValues.js';
import { organizationSnapshot, rowCounts } from './integrity.js';
import { fuzzParams, startFuzzWorld, type FuzzWorld } from './fuzzWorld.js';

// Penetration test 3, findings 3 and 5 (SECURITY.md "Penetration test 3: input bounds"): every string a write
// stores has a maximum length, stated as maxLength in the OpenAPI document (the MCP tool's inputSchema, written for a
// model, leaves it out). Here, for every write of the live document and tools/list and every such string (nested ones
// included), a valid call whose one string is longer than its maxLength is refused with validation_error naming that
// field, and nothing is stored.

const RUNS = 5;

const catalog = buildToolCatalog();
/** The input schema of a tool's procedure, bounds and all, as JSON Schema. */
const procedureInput = (tool: string) =>
  z.toJSONSchema(catalog.get(tool)!.proc.input, { io: 'input', unrepresentable: 'any' }) as Schema;
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** Characters of an oversized value: never a space (a name is trimmed before it is measured), never half a pair. */
const CHARS = ['a', 'é', '中', 'Z', '9', '-', '€'];
const oversized = (max: number) =>
  fc.tuple(fc.integer({ min: 1, max: 64 }), fc.constantFrom(...CHARS)).map(([extra, c]) => c.repeat(max + extra));

/** Replaces every lone surrogate of the generated values (a different finding, refused before the schema). */
const wellFormed = (v: unknown): unknown => {
  if (typeof v === 'string') return v.replace(/\p{Cs}/gu, 'x');
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wellFormed(x)]));
  return v;
};

/** Paths (`input.text`) of the strings with a maxLength in an object schema. */
function boundedStrings(
  schema: Schema,
  resolve: (s: Schema) => Schema,
  prefix: string[] = [],
): { path: string[]; max: number }[] {
  const s = resolve(schema);
  const out: { path: string[]; max: number }[] = [];
  for (const [k, raw] of Object.entries<Schema>(s.properties ?? {})) {
    const p = resolve(raw);
    const alternatives: Schema[] = [p, ...(p.anyOf ?? []), ...(p.oneOf ?? [])].map(resolve);
    const str = alternatives.find((a) => a.type === 'string' && typeof a.maxLength === 'number' && !a.enum);
    if (str) out.push({ path: [...prefix, k], max: str.maxLength });
    const obj = alternatives.find((a) => a.type === 'object');
    if (obj) out.push(...boundedStrings(obj, resolve, [...prefix, k]));
  }
  return out;
}

const setPath = (o: Record<string, any>, path: string[], value: unknown) => {
  let cur = o;
  for (const k of path.slice(0, -1)) cur = cur[k] = cur[k] && typeof cur[k] === 'object' ? cur[k] : {};
  cur[path[path.length - 1]] = value;
  return o;
};

describe('oversized strings on every write (penetration test 3)', () => {
  let w: FuzzWorld;
  beforeAll(async () => {
    w = await startFuzzWorld();
  });
  afterAll(async () => w?.close());

  const unchanged = async (check: () => Promise<void>) => {
    const before = { a: await organizationSnapshot(w.t.rt, w.a.orgId), counts: await rowCounts(w.t.rt) };
    await check();
    expect({ a: await organizationSnapshot(w.t.rt, w.a.orgId), counts: await rowCounts(w.t.rt) }).toEqual(before);
  };

  it("REST: every string of every write's body (and an upload's query) over its maxLength is a validation_error; nothing stored", async () => {
    const doc: any = await (await w.t.fetch('/v1/openapi.json')).json();
    const deref = (s: Schema): Schema =>
      s?.$ref
        ? deref(
            s.$ref
              .split('/')
              .slice(1)
              .reduce((o: any, k: string) => o[k], doc),
          )
        : s;
    const o = { ids: w.sandbox, resolve: (ref: string) => deref({ $ref: ref }) };
    let checked = 0;
    await unchanged(async () => {
      for (const [path, ops] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(ops)) {
          if (method === 'get') continue;
          const params = (op.parameters ?? []).map(deref);
          const url = path.replace(/\{(\w+)\}/g, (_m: string, name: string) => {
            const pattern = params.find((p: Schema) => p.name === name)?.schema?.pattern ?? '';
            const prefix = /^\^\(?([a-z]+)_/.exec(pattern)?.[1] ?? '';
            return w.sandbox[prefix]?.[0] ?? w.ids[prefix]?.[0] ?? 'x';
          });
          const bodySchema = op.requestBody?.content?.['application/json']?.schema;
          const targets: { where: 'body' | 'query'; path: string[]; max: number }[] = [
            ...(bodySchema ? boundedStrings(bodySchema, deref).map((t) => ({ where: 'body' as const, ...t })) : []),
            ...params
              .filter((p: Schema) => p.in === 'query' && typeof p.schema?.maxLength === 'number')
              .map((p: Schema) => ({ where: 'query' as const, path: [p.name], max: p.schema.maxLength })),
          ];
          for (const target of targets) {
            checked++;
            const base = bodySchema ? valueFor(deref(bodySchema), o).map(wellFormed) : fc.constant({});
            await fc.assert(
              fc.asyncProperty(base, oversized(target.max), async (valid, long) => {
                const headers: Record<string, string> = { authorization: `Bearer ${w.a.key}` };
                let target_url = url;
                let body: string;
                if (target.where === 'body') {
                  body = JSON.stringify(setPath({ ...(valid as object) }, target.path, long));
                  headers['content-type'] = 'application/json';
                } else {
                  // an upload: the other query parameters valid, the bytes a small text
                  target_url = `${url}?${target.path[0]}=${encodeURIComponent(long)}`;
                  body = 'hello';
                  headers['content-type'] = 'text/plain';
                }
                const res = await w.t.fetch(target_url, { method: method.toUpperCase(), headers, body });
                const json: any = await res.json();
                const label = `${method.toUpperCase()} ${path} ${target.path.join('.')}`;
                expect(res.status, label).toBe(400);
                expect(json.error.code, label).toBe('validation_error');
                expect(
                  json.error.details.issues.map((i: { path: string }) => i.path),
                  label,
                ).toContain(target.path.join('.'));
              }),
              fuzzParams(RUNS, `oversize:${method} ${path} ${target.path.join('.')}`),
            );
          }
        }
      }
    });
    expect(checked).toBeGreaterThan(15);
  });

  it('MCP: every string of every write tool of tools/list over its maxLength is a validation_error; nothing stored', async () => {
    const post = async (body: unknown) => {
      const res = await w.t.fetch('/mcp', {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${w.a.key}` },
        body: JSON.stringify(body),
      });
      return (await res.json()) as any;
    };
    const tools: { name: string; inputSchema: Schema; annotations?: { readOnlyHint?: boolean } }[] = (
      await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    ).result.tools;
    const o = { ids: w.sandbox };
    let checked = 0;
    await unchanged(async () => {
      for (const tool of tools.filter((t) => t.annotations?.readOnlyHint !== true)) {
        // (an upload's two content fields exclude each other: keep the text one, the bytes are bounded by
        // SVC_MAX_UPLOAD_BYTES) (a tool's inputSchema is written for a model and leaves length bounds out: they are its
        // procedure's own)
        const { oneOf: _oneOf, ...schema } = procedureInput(tool.name);
        if (tool.name === 'upload_file') {
          const { contentBase64: _bytes, ...props } = schema.properties;
          schema.properties = props;
        }
        // (idempotencyKey is REST's header: its own parser refuses a long one, test/pipeline/idempotency.test.ts)
        // (upload_file's text: its 16 MiB are past the body's own limit, which answers 413 first)
        for (const target of boundedStrings(schema, (s) => s).filter(
          (x) => x.path[0] !== 'idempotencyKey' && x.max < 512 * 1024,
        )) {
          checked++;
          const base = valueFor(schema, o)
            .map(wellFormed)
            .map((v) => {
              const args = { ...(v as Record<string, unknown>) };
              if (tool.name === 'upload_file') {
                delete args.contentBase64;
                args.text ??= 'hello';
              }
              return args;
            });
          await fc.assert(
            fc.asyncProperty(base, oversized(target.max), async (valid, long) => {
              const args = setPath(valid, target.path, long);
              const r = await post({
                jsonrpc: '2.0',
                id: 2,
                method: 'tools/call',
                params: { name: tool.name, arguments: args },
              });
              const label = `${tool.name} ${target.path.join('.')}`;
              expect(r.result?.isError, label).toBe(true);
              const env = JSON.parse(r.result.content[0].text);
              expect(env.error.code, label).toBe('validation_error');
              expect(
                env.error.details.issues.map((i: { path: string }) => i.path),
                label,
              ).toContain(target.path.join('.'));
            }),
            fuzzParams(RUNS, `oversize:${tool.name} ${target.path.join('.')}`),
          );
        }
      }
    });
    expect(checked).toBeGreaterThan(15);
  });
});
