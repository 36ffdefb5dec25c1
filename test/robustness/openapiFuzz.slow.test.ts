import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../rest/openapi.js';
import {
  absurdHeaderValue,
  brokenUtf8Body,
  flawedObject,
  junkJson,
  rawJsonTexts,
  shortNastyString,
  valueFor,
  type Schema,
  type SchemaArbOptions,
} from './fuzzValues.js';
import { envelopeProblem, fuzzParams, readAnswer, startFuzzWorld, type FuzzWorld } from './fuzzWorld.js';

// Every /v1 operation of the emitted OpenAPI document, sent generated valid and invalid path
// parameters, query parameters, bodies and headers. Every answer is a status the document lists for the
// operation (or one the pipeline adds to any: 404, 405, 413, 415, 429), never a 5xx, and every error is the
// spec's envelope; afterwards the database is intact (see integrity.ts).

const PIPELINE_STATUSES = [404, 405, 413, 415, 429];
const RUNS_PER_OPERATION = 45;
const ONE_MIB_AND_MORE = Buffer.alloc(1024 * 1024 + 10, 'a');

/** Percent-encodes the UTF-8 bytes of any string (lone surrogates included) for a path or query. */
const pct = (v: string) =>
  [...Buffer.from(v, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

/** Path and query pieces that are not valid percent-encoding or not valid UTF-8 once decoded. */
const RAW_SEGMENTS = ['%FF', '%', '%zz', '%00', '%2F', '..%2F', '%C0%AF', '%ED%A0%80', '%E2%82', ';', '%20', '..'];

interface FuzzRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: Buffer;
}

type Operation = { method: string; path: string; op: Schema };

const docOperations = (doc: Schema): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

// the operation list for the test names; each test then takes its operation from the served document
const NAMES = docOperations(buildOpenApiDocument('http://localhost')).map((o) => `${o.method} ${o.path}`);

function requestArbitrary(
  w: FuzzWorld,
  { method, path, op }: Operation,
  resolve: (ref: string) => Schema,
): fc.Arbitrary<FuzzRequest> {
  const o: SchemaArbOptions = { ids: w.ids, resolve };
  // (a parameter several operations share is a reference to components.parameters)
  const params: Schema[] = (op.parameters ?? []).map((p: Schema) => (p.$ref ? resolve(p.$ref) : p));
  const segment = (s: Schema) =>
    fc.oneof(
      { weight: 6, arbitrary: valueFor(s, o).map((v) => pct(String(v))) },
      { weight: 2, arbitrary: shortNastyString.map(pct) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
    );
  const pathParams = params.filter((p) => p.in === 'path');
  // either every parameter names one of world A's objects (so the operation can succeed), or each is drawn alone
  const coherent = (p: Schema) =>
    fc.constantFrom(...(w.sandbox[/^\^([a-z]+)_/.exec(p.schema.pattern ?? '')?.[1] ?? ''] ?? ['x']));
  const pathArb = fc
    .oneof(
      { weight: 2, arbitrary: fc.tuple(...pathParams.map(coherent)) },
      { weight: 3, arbitrary: fc.tuple(...pathParams.map((p) => segment(p.schema))) },
    )
    .map((values) => pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, values[i] as string), path));

  const queryValue = (s: Schema) =>
    fc.oneof(
      { weight: 4, arbitrary: valueFor(s, o).map((v) => pct(String(v))) },
      { weight: 2, arbitrary: shortNastyString.map(pct) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
    );
  const queryParams = params.filter((p) => p.in === 'query');
  const messyQuery = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        fc
          .array(queryValue(p.schema), { minLength: 1, maxLength: 2 })
          .map((vs) => vs.map((v) => `${p.name}=${v}`).join('&')),
        { freq: 2 },
      ),
    ),
    fc.option(
      fc.oneof(
        fc.tuple(shortNastyString, shortNastyString).map(([k, v]) => `${pct(k) || 'x'}=${pct(v)}`),
        fc.constantFrom('%', '&&&', '=x', 'limit', 'a[b]=1', '__proto__[x]=1'),
      ),
      { freq: 3 },
    ),
  );
  // or only well-formed values (a cursor is opaque: only nextCursor is well-formed, so none here)
  const cleanQuery = fc.tuple(
    ...queryParams
      .filter((p) => p.name !== 'cursor')
      .map((p) =>
        fc.option(
          valueFor(p.schema, o).map((v) => `${p.name}=${pct(String(v))}`),
          { freq: 2 },
        ),
      ),
  );
  const queryArb = fc.oneof(cleanQuery, messyQuery).map((parts) => parts.filter((x): x is string => !!x).join('&'));

  const auth = fc.oneof(
    { weight: 10, arbitrary: fc.constant({ authorization: `Bearer ${w.a.key}` }) },
    { weight: 4, arbitrary: fc.constant({ authorization: `Bearer ${w.memberKey}` }) },
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': w.a.key }) },
    { weight: 1, arbitrary: fc.constantFrom(...w.limitedKeys).map((k) => ({ authorization: `Bearer ${k}` })) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constant({}),
        absurdHeaderValue.map((v) => ({ authorization: v })),
        absurdHeaderValue.map((v) => ({ authorization: `Bearer svc_live_${v}` })),
        absurdHeaderValue.map((v) => ({ 'x-api-key': v })),
        fc.constant({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
      ),
    },
  );
  const write = method !== 'GET';
  const none = fc.constant(undefined);
  const extraHeaders = fc
    .record({
      'idempotency-key': write
        ? fc.oneof(
            { weight: 6, arbitrary: none },
            { weight: 2, arbitrary: fc.uuid() },
            { weight: 2, arbitrary: absurdHeaderValue },
          )
        : fc.oneof({ weight: 9, arbitrary: none }, { weight: 1, arbitrary: fc.constant('k1') }),
      'x-request-id': fc.oneof(
        { weight: 6, arbitrary: none },
        { weight: 1, arbitrary: fc.constantFrom('req-fuzz-1', 'r:1.2_3') },
        { weight: 2, arbitrary: absurdHeaderValue },
      ),
      accept: fc.oneof(
        { weight: 6, arbitrary: none },
        { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', '') },
      ),
    })
    .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);

  const jsonBody = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  const binaryBody = !!op.requestBody?.content?.['application/octet-stream'];
  const schema = jsonBody?.$ref ? resolve(jsonBody.$ref) : jsonBody;
  type Body = { body?: Buffer; contentType?: string };
  const json = (v: unknown): Body => ({ body: Buffer.from(JSON.stringify(v)), contentType: 'application/json' });
  const oddType = fc.constantFrom(
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'APPLICATION/JSON',
    'application/vnd.api+json',
    'application/xml',
    '\xff/\xfe',
    'json',
    '',
  );
  let bodyArb: fc.Arbitrary<Body>;
  if (binaryBody) {
    bodyArb = fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(
            fc.uint8Array({ maxLength: 3000 }),
            fc.option(fc.oneof(fc.constantFrom('text/plain', 'image/png', 'application/pdf; x=1'), oddType), {
              freq: 5,
            }),
          )
          .map(([b, ct]) => ({ body: Buffer.from(b), contentType: ct ?? undefined })),
      },
      { weight: 1, arbitrary: fc.constant({ body: Buffer.alloc(65537, 1), contentType: 'application/octet-stream' }) },
      { weight: 1, arbitrary: fc.constant({}) },
    );
  } else if (schema) {
    const key = Object.keys(schema.properties ?? {})[0] ?? 'name';
    bodyArb = fc.oneof(
      { weight: 6, arbitrary: valueFor(schema, o).map(json) },
      { weight: 3, arbitrary: flawedObject(schema, o).map(json) },
      {
        weight: 2,
        arbitrary: rawJsonTexts(schema).map((t) => ({ body: Buffer.from(t), contentType: 'application/json' })),
      },
      { weight: 1, arbitrary: brokenUtf8Body(key).map((b) => ({ body: b, contentType: 'application/json' })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(valueFor(schema, o), oddType)
          .map(([v, ct]) => ({ body: Buffer.from(JSON.stringify(v)), contentType: ct })),
      },
      { weight: 1, arbitrary: junkJson.map(json) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Body>(
          {},
          { body: Buffer.alloc(0), contentType: 'application/json' },
          { body: ONE_MIB_AND_MORE, contentType: 'application/json' },
        ),
      },
    );
  } else if (write) {
    // writes without a body: most send none, some send one anyway
    bodyArb = fc.oneof(
      { weight: 5, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: junkJson.map(json) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.uint8Array({ minLength: 1, maxLength: 200 }), oddType)
          .map(([b, ct]) => ({ body: Buffer.from(b), contentType: ct })),
      },
    );
  } else {
    bodyArb = fc.constant({});
  }

  return fc.record({ path: pathArb, query: queryArb, auth, extra: extraHeaders, body: bodyArb }).map((r) => {
    const headers: Record<string, string> = { ...r.auth, ...r.extra };
    if (!write) delete headers['idempotency-key'];
    if (r.body.contentType !== undefined) headers['content-type'] = r.body.contentType;
    const req: FuzzRequest = { method, path: r.path, query: r.query, headers, body: r.body.body };
    // fast-check prints counterexamples with this: short, whatever the sizes generated
    return Object.assign(req, { [fc.toStringMethod]: () => show(req) });
  });
}

function show(req: FuzzRequest): string {
  const body = req.body
    ? `${JSON.stringify(req.body.subarray(0, 200).toString('latin1'))}${req.body.length > 200 ? `… (${req.body.length} bytes)` : ''}`
    : '-';
  return `${req.method} ${req.path.slice(0, 300)}?${req.query.slice(0, 200)} headers=${JSON.stringify(req.headers).slice(0, 300)} body=${body}`;
}

async function send(w: FuzzWorld, req: FuzzRequest) {
  const url = `${req.path}${req.query ? `?${req.query}` : ''}`;
  const res = await w.t.fetch(url, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    signal: AbortSignal.timeout(20_000),
  });
  return readAnswer(res);
}

describe('OpenAPI-driven fuzzing of /v1', () => {
  let w: FuzzWorld;
  let doc: Schema;
  const seen: Record<string, number[]> = {};
  beforeAll(async () => {
    w = await startFuzzWorld();
    doc = (await (await w.t.fetch('/v1/openapi.json')).json()) as Schema;
  });
  afterAll(async () => {
    await w?.close();
  });

  it('the served document lists every operation fuzzed here', () => {
    expect(
      docOperations(doc)
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
    ).toEqual([...NAMES].sort());
  });

  it.each(NAMES)(
    '%s answers documented statuses with the error envelope, never a 5xx',
    { timeout: 60_000 },
    async (name) => {
      const operation = docOperations(doc).find((o) => `${o.method} ${o.path}` === name)!;
      await w.refresh();
      const resolve = (ref: string) => {
        const [, , kind, name] = ref.split('/');
        return doc.components[kind][name] as Schema;
      };
      const allowed = new Set([
        ...Object.keys(operation.op.responses)
          .map(Number)
          .filter((s) => s < 500),
        ...PIPELINE_STATUSES,
      ]);
      await fc.assert(
        fc.asyncProperty(requestArbitrary(w, operation, resolve), async (req) => {
          const r = await send(w, req);
          (seen[name] ??= []).push(r.status);
          const fail = (why: string) =>
            new Error(`${why}\n  request: ${show(req)}\n  answer: ${r.status} ${r.text.slice(0, 400)}`);
          if (r.status >= 500) throw fail('server error');
          if (!allowed.has(r.status)) throw fail(`status ${r.status} is not documented for ${name}`);
          if (r.status >= 400) {
            const problem = envelopeProblem(r.json, r.headers.get('x-request-id'));
            if (problem) throw fail(problem);
          } else if (operation.op.operationId !== 'get_file_content' && !r.stream && r.json === null) {
            throw fail('a success that is not JSON');
          }
        }),
        fuzzParams(RUNS_PER_OPERATION, name),
      );
    },
  );

  it('reached the operations: every one refused something, and nearly every one succeeded too', () => {
    // success of state-dependent operations (approve after request…) depends on the draw; most must get there
    const summary = JSON.stringify(
      Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...new Set(v)].sort().join(',')])),
      null,
      1,
    );
    for (const name of NAMES)
      expect(
        seen[name]?.some((s) => s >= 400),
        `${name} refused nothing: ${summary}`,
      ).toBe(true);
    const succeeded = NAMES.filter((name) => seen[name]?.some((s) => s < 300));
    expect(succeeded.length, summary).toBeGreaterThanOrEqual(Math.floor(NAMES.length * 0.85));
  });

  it('leaves the database intact: the witness organization, the tables /v1 cannot write, and every invariant', async () => {
    const r = await w.verifyIntact();
    expect(r.problems).toEqual([]);
    expect(r.countsAfter).toEqual(r.countsBefore);
    expect(r.witnessAfter).toEqual(r.witnessBefore);
    // the witness is still served, unchanged, to its own key
    const room = await w.t.fetch(`/v1/rooms/${w.b.roomId}/records`, {
      headers: { authorization: `Bearer ${w.b.key}` },
    });
    expect(room.status).toBe(200);
    expect(((await room.json()) as any).data.map((x: { title: string }) => x.title).sort()).toEqual([
      'Budget',
      'Weekly',
    ]);
  });
});
