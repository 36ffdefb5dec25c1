import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../rest/openapi.js';
import { valueFor, type Schema } from '../robustness/fuzzValues.js';
import { envelopeProblem, fuzzParams, readAnswer, startFuzzWorld, type FuzzWorld } from '../robustness/fuzzWorld.js';

// The document is the contract. For every operation, requests generated from what the document
// allows are never refused as a schema failure (400 validation_error): they succeed, or answer a code the document
// lists for that status (a business rule, a missing object, a state…). Requests that break one thing the document
// states (an unknown field or query parameter, a wrong type, a missing required field, a length or range bound, a
// pattern, a malformed Idempotency-Key) answer 400 validation_error. Every answer's status and code are documented.

const ALLOWED_RUNS = 12;
const FORBIDDEN_RUNS = 8;

type Operation = { method: string; path: string; op: Schema };
interface Req {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: Buffer;
  /** What the request breaks, for a forbidden one. */
  flaw?: string;
}

const docOperations = (doc: Schema): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
const NAMES = docOperations(buildOpenApiDocument('http://localhost')).map((o) => `${o.method} ${o.path}`);

/** Percent-encodes the UTF-8 bytes of a string for a path or a query. */
const pct = (v: string) =>
  [...Buffer.from(v, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

function show(r: Req) {
  const q = r.query.map(([k, v]) => `${k}=${v}`).join('&');
  return `${r.flaw ? `[${r.flaw}] ` : ''}${r.method} ${r.path}?${q.slice(0, 200)} ${JSON.stringify(r.headers).slice(0, 200)} ${r.body?.subarray(0, 300).toString() ?? '-'}`;
}

function parts(doc: Schema, { op }: Operation) {
  const resolve = (ref: string) => {
    const [, kind, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref)!;
    return doc.components[kind][name] as Schema;
  };
  const params: Schema[] = (op.parameters ?? []).map((p: Schema) => (p.$ref ? resolve(p.$ref) : p));
  const json = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  return {
    resolve,
    pathParams: params.filter((p) => p.in === 'path'),
    // a cursor is opaque: only a nextCursor is well-formed, so none is generated
    queryParams: params.filter((p) => p.in === 'query' && p.name !== 'cursor'),
    idempotencyKey: params.find((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
    bodySchema: json ? (json.$ref ? resolve(json.$ref) : json) : undefined,
    binaryBody: !!op.requestBody?.content?.['*/*'],
  };
}

/** The id prefixes a parameter's pattern admits (`^room_…`, or alternatives as `^(whd_…|uuid)$`). */
const prefixes = (p: Schema) => [...String(p.schema.pattern ?? '').matchAll(/(?:^\^|[(|])([a-z]+)_/g)].map((m) => m[1]);

/** Requests the document allows: every value drawn from its schema, path parameters naming world A's objects. */
function allowedRequest(w: FuzzWorld, doc: Schema, o: Operation): fc.Arbitrary<Req> {
  const { resolve, pathParams, queryParams, idempotencyKey, bodySchema, binaryBody } = parts(doc, o);
  const opts = { ids: w.sandbox, resolve };
  const pathValue = (p: Schema): fc.Arbitrary<string> => {
    const known = prefixes(p).flatMap((x) => w.sandbox[x] ?? []);
    // redeliver's deliveryId also takes a Svc-Webhook-Delivery UUID: the document lists its answer, 404 not_found
    const uuid =
      p.schema.pattern && new RegExp(p.schema.pattern).test('0b6f6f4e-3c1a-4d2e-9f00-1a2b3c4d5e6f') ? [fc.uuid()] : [];
    if (!known.length && !uuid.length) return fc.constant('x');
    return known.length
      ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, ...uuid.map((a) => ({ arbitrary: a, weight: 1 })))
      : uuid[0];
  };
  const pathArb = fc
    .tuple(...pathParams.map(pathValue))
    .map((vs) => pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, pct(vs[i])), o.path));
  const queryArb = fc
    .tuple(
      ...queryParams.map((p) => {
        const value = valueFor(p.schema, opts).map((v) => [p.name, pct(String(v))] as [string, string]);
        return p.required ? value : fc.option(value, { nil: undefined });
      }),
    )
    .map((q) => q.filter((x): x is [string, string] => !!x));
  const keyArb = idempotencyKey
    ? fc.option(valueFor(idempotencyKey.schema, opts).map(String), { nil: undefined })
    : fc.constant(undefined);
  const bodyArb: fc.Arbitrary<{ body?: Buffer; type?: string }> = binaryBody
    ? fc
        .tuple(
          fc.uint8Array({ maxLength: 2000 }),
          fc.constantFrom('application/octet-stream', 'image/png', 'text/plain; charset=utf-8', 'application/pdf'),
        )
        .map(([b, type]) => ({ body: Buffer.from(b), type }))
    : bodySchema
      ? valueFor(bodySchema, opts).map((v) => ({ body: Buffer.from(JSON.stringify(v)), type: 'application/json' }))
      : fc.constant({});
  return fc.record({ path: pathArb, query: queryArb, key: keyArb, body: bodyArb }).map((r) => {
    const headers: Record<string, string> = { authorization: `Bearer ${w.a.key}` };
    if (r.key !== undefined) headers['idempotency-key'] = r.key;
    if (r.body.type) headers['content-type'] = r.body.type;
    const req: Req = { method: o.method, path: r.path, query: r.query, headers, body: r.body.body };
    return Object.assign(req, { [fc.toStringMethod]: () => show(req) });
  });
}

/** Requests that break exactly one thing the document states, on an otherwise allowed request. */
function forbiddenRequest(w: FuzzWorld, doc: Schema, o: Operation): fc.Arbitrary<Req> {
  const { pathParams, queryParams, idempotencyKey, bodySchema } = parts(doc, o);
  const flaws: fc.Arbitrary<(r: Req) => Req>[] = [
    fc
      .constantFrom('sort', 'verbose', 'x')
      .map((k) => (r: Req) => ({ ...r, query: [...r.query, [k, '1']], flaw: `unknown query parameter ${k}` })),
  ];
  if (pathParams.length) {
    flaws.push(
      fc.constantFrom(...pathParams).map((p) => (r: Req) => ({
        ...r,
        path: o.path
          .replace(`{${p.name}}`, 'not-an-id')
          .replace(
            /\{(\w+)\}/g,
            (_m, n: string) => w.sandbox[prefixes(pathParams.find((x) => x.name === n)!)[0]]?.[0] ?? 'x',
          ),
        flaw: `path parameter ${p.name} against its pattern`,
      })),
    );
  }
  const limit = queryParams.find((p) => p.name === 'limit');
  if (limit) {
    flaws.push(
      fc.constantFrom(limit.schema.minimum - 1, limit.schema.maximum + 1, 'ten').map((v) => (r: Req) => ({
        ...r,
        query: [...r.query.filter(([k]) => k !== 'limit'), ['limit', String(v)]],
        flaw: `limit=${v}`,
      })),
    );
  }
  if (idempotencyKey) {
    flaws.push(
      fc
        .constantFrom('k'.repeat(256), 'é-key')
        .map((k) => (r: Req) => ({ ...r, headers: { ...r.headers, 'idempotency-key': k }, flaw: 'Idempotency-Key' })),
    );
  }
  if (bodySchema) {
    const props = Object.entries<Schema>(bodySchema.properties ?? {});
    const withBody = (r: Req, f: (b: Record<string, unknown>) => Record<string, unknown>, flaw: string): Req => {
      const body = r.body?.length ? JSON.parse(r.body.toString()) : {};
      return {
        ...r,
        body: Buffer.from(JSON.stringify(f(body))),
        headers: { ...r.headers, 'content-type': 'application/json' },
        flaw,
      };
    };
    flaws.push(
      fc
        .constantFrom('pinned', 'extra', 'id')
        .map((k) => (r: Req) => withBody(r, (b) => ({ ...b, [k]: true }), `unknown body field ${k}`)),
    );
    // (a property with no type, such as an agent run's `output`, takes any JSON: no value is of the wrong type)
    const typed = props.filter(([, s]) => s.type !== undefined);
    if (typed.length) {
      flaws.push(
        fc.constantFrom(...typed).map(
          ([k, s]) =>
            (r: Req) =>
              withBody(
                r,
                (b) => ({
                  ...b,
                  [k]: (Array.isArray(s.type) ? s.type : [s.type]).includes('string') ? 12345 : 'not-a-valid-value',
                }),
                `wrong type for ${k}`,
              ),
        ),
      );
      const long = props.filter(([, s]) => typeof s.maxLength === 'number');
      if (long.length)
        flaws.push(
          fc.constantFrom(...long).map(
            ([k, s]) =>
              (r: Req) =>
                withBody(r, (b) => ({ ...b, [k]: 'x'.repeat(s.maxLength + 1) }), `${k} over maxLength`),
          ),
        );
    }
    for (const k of bodySchema.required ?? []) {
      flaws.push(
        fc.constant((r: Req) =>
          withBody(
            r,
            (b) => {
              const { [k]: _gone, ...rest } = b;
              return rest;
            },
            `required ${k} missing`,
          ),
        ),
      );
    }
  }
  return fc.tuple(allowedRequest(w, doc, o), fc.oneof(...flaws)).map(([r, flaw]) => {
    const req = flaw(r);
    return Object.assign(req, { [fc.toStringMethod]: () => show(req) });
  });
}

async function send(w: FuzzWorld, r: Req) {
  const q = r.query.map(([k, v]) => `${k}=${v}`).join('&');
  const res = await w.t.fetch(`${r.path}${q ? `?${q}` : ''}`, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    signal: AbortSignal.timeout(20_000),
  });
  return readAnswer(res);
}

/** The codes the document lists for this operation and status. */
function documentedCodes(doc: Schema, op: Schema, status: number): string[] | undefined {
  const r = op.responses[String(status)];
  if (!r?.$ref) return undefined;
  return doc.components.responses[r.$ref.split('/').pop()].content['application/json'].schema.allOf[1].properties.error
    .properties.code.enum;
}

describe('the document predicts the server', () => {
  let w: FuzzWorld;
  let doc: Schema;
  const outcomes: Record<string, Set<number>> = {};
  beforeAll(async () => {
    w = await startFuzzWorld();
    doc = (await (await w.t.fetch('/v1/openapi.json')).json()) as Schema;
  });
  afterAll(async () => {
    await w?.close();
  });

  it.each(NAMES)(
    '%s: allowed requests pass the schema, forbidden ones are 400 validation_error',
    { timeout: 60_000 },
    async (name) => {
      const o = docOperations(doc).find((x) => `${x.method} ${x.path}` === name)!;
      await w.refresh();
      const judge = (r: Req, a: Awaited<ReturnType<typeof send>>) => {
        const fail = (why: string) =>
          new Error(`${why}\n  request: ${show(r)}\n  answer: ${a.status} ${a.text.slice(0, 400)}`);
        if (a.status < 300) {
          if (!o.op.responses[String(a.status)]) throw fail(`success status ${a.status} is not documented`);
          return;
        }
        const problem = envelopeProblem(a.json, a.headers.get('x-request-id'));
        if (problem) throw fail(problem);
        const codes = documentedCodes(doc, o.op, a.status);
        if (!codes?.includes(a.json.error.code))
          throw fail(`${a.status} ${a.json.error.code} is not among the documented ${JSON.stringify(codes)}`);
      };
      await fc.assert(
        fc.asyncProperty(allowedRequest(w, doc, o), async (r) => {
          const a = await send(w, r);
          (outcomes[name] ??= new Set()).add(a.status);
          judge(r, a);
          if (a.status === 400 && a.json.error.code === 'validation_error') {
            throw new Error(
              `the document allows what the schema refused\n  request: ${show(r)}\n  answer: ${a.text.slice(0, 400)}`,
            );
          }
        }),
        fuzzParams(ALLOWED_RUNS, `allowed ${name}`),
      );
      await fc.assert(
        fc.asyncProperty(forbiddenRequest(w, doc, o), async (r) => {
          const a = await send(w, r);
          judge(r, a);
          if (a.status !== 400 || a.json.error.code !== 'validation_error') {
            throw new Error(
              `the document forbids what the server did not refuse as validation_error\n  request: ${show(r)}\n  answer: ${a.status} ${a.text.slice(0, 400)}`,
            );
          }
        }),
        fuzzParams(FORBIDDEN_RUNS, `forbidden ${name}`),
      );
    },
  );

  it('allowed requests reached the operations: nearly every one succeeded', () => {
    const summary = JSON.stringify(Object.fromEntries(Object.entries(outcomes).map(([k, v]) => [k, [...v].sort()])));
    const succeeded = NAMES.filter((n) => [...(outcomes[n] ?? [])].some((s) => s < 300));
    expect(succeeded.length, summary).toBeGreaterThanOrEqual(Math.floor(NAMES.length * 0.85));
  });
});
