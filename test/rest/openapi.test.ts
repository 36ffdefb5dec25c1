import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildToolCatalog, ERRORS_META } from '../../mcp/tools/toolCatalog.js';
import { ERROR_STATUS } from '../../src/domain/errors.js';
import { errorCodesOf, EVERY_CALL_CODES, ownErrorCodesOf } from '../../src/procedures/errorCodes.js';
import { listProcedures } from '../../src/procedures/index.js';
import { call, createWorld, sharedTestServer } from '../helpers/harness.js';
import { bodyOf, connectMcp } from '../mcp/mcpClient.js';

/** Every global name of JavaScript, TypeScript and the DOM (TypeScript's own lib files declare them). */
function globalNames(): Set<string> {
  const dir = path.dirname(createRequire(import.meta.url).resolve('typescript'));
  const names = new Set<string>();
  for (const f of fs.readdirSync(dir).filter((f) => /^lib\..*\.d\.ts$/.test(f))) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/^(?:declare )?(?:var|function|interface|type|class|namespace) ([A-Za-z_$][\w$]*)/gm))
      names.add(m[1]);
  }
  return names;
}

/** Every schema node under `node`, depth first. */
function* schemaNodes(node: unknown, at = ''): Generator<[string, any]> {
  if (!node || typeof node !== 'object') return;
  yield [at, node];
  for (const [k, v] of Object.entries(node)) yield* schemaNodes(v, `${at}/${k}`);
}

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document generated from the procedures', async () => {
    await using t = await sharedTestServer();
    const res = await t.fetch('/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).toMatch(/^3\.1\./);
    await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'apiKeyHeader', 'oauth2']);
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(`${t.baseUrl}/oauth/token`);
    for (const p of listProcedures()) {
      const op = doc.paths[p.meta.http.path]?.[p.meta.http.method.toLowerCase()];
      expect(op, `${p.meta.http.method} ${p.meta.http.path}`).toBeTruthy();
      expect(op.operationId).toBe(p.meta.tool.name);
      expect(op['x-api-units']).toBe(p.meta.units);
      expect(op.security).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }, { oauth2: [p.meta.scope] }]);
      expect(op.responses[String(p.meta.http.successStatus ?? 200)].headers['Svc-Api-Units-Cost']).toEqual({
        $ref: '#/components/headers/Svc-Api-Units-Cost',
      });
      if (p.meta.kind === 'write')
        expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    }
    const upload = doc.paths['/v1/rooms/{roomId}/files'].post;
    // (a parameter several operations share is a reference to components.parameters)
    const paramName = (x: any) => (x.$ref ? doc.components.parameters[x.$ref.split('/').pop()].name : x.name);
    expect(upload.parameters.map(paramName)).toEqual(
      expect.arrayContaining(['roomId', 'filename', 'messageId', 'taskId']),
    );
    // `text` stands for the body over MCP only; REST sends the bytes
    expect(upload.parameters.map(paramName)).not.toContain('text');
    expect(doc.paths['/v1/rooms'].get.parameters.map(paramName)).toEqual(['limit', 'cursor']);
  });

  it('is under 4 KB an operation, with shared headers, responses and parameters referenced from components', async () => {
    await using t = await sharedTestServer();
    const text = await (await t.fetch('/v1/openapi.json')).text();
    const doc = JSON.parse(text);
    const operations = Object.values<Record<string, unknown>>(doc.paths).flatMap((item) => Object.keys(item)).length;
    // (a budget that grows with the operations, not with what each one repeats)
    expect(Buffer.byteLength(text) / operations).toBeLessThan(4 * 1024);
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'Svc-Api-Units-Reset', 'Retry-After']),
    );
    expect(doc.components.parameters.IdempotencyKey.schema).toMatchObject({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$',
    });
    for (const [at, node] of schemaNodes(doc.paths)) {
      // a response's headers are references, but for the two only a download has
      if (at.endsWith('/headers')) {
        for (const [name, h] of Object.entries(node))
          if (!['Content-Disposition', 'ETag'].includes(name)) expect(h, `${at}/${name}`).toHaveProperty('$ref');
      }
      // every error response is a shared one
      const status = /\/responses\/(\d+)$/.exec(at)?.[1];
      if (status && Number(status) >= 400)
        expect(node, at).toEqual({ $ref: expect.stringMatching(/^#\/components\/responses\//) });
    }
    // every JSON request body is a named schema
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        const json = op.requestBody?.content?.['application/json'];
        if (json) expect(json.schema.$ref, op.operationId).toMatch(/^#\/components\/schemas\/[A-Z]\w+Request$/);
      }
    }
    // top-level tags with descriptions, and every tag used is among them
    const tags = new Map(doc.tags.map((x: any) => [x.name, x.description]));
    for (const item of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(item)) for (const tag of op.tags) expect(tags.get(tag), tag).toBeTruthy();
  });

  it('names no schema after a JavaScript, TypeScript or DOM global (Error, File, Record, Event…)', async () => {
    await using t = await sharedTestServer();
    const doc = (await (await t.fetch('/v1/openapi.json')).json()) as any;
    const globals = globalNames();
    expect(globals.has('Error') && globals.has('File') && globals.has('Record') && globals.has('Event')).toBe(true);
    expect(Object.keys(doc.components.schemas).filter((n) => globals.has(n))).toEqual([]);
    expect(Object.keys(doc.components.responses).filter((n) => globals.has(n))).toEqual([]);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['ApiError', 'FileMetadata', 'MeetingRecord', 'EventObject']),
    );
  });

  it('states what the server enforces: closed bodies, date-time timestamps, no NUL, described parameters', async () => {
    await using t = await sharedTestServer();
    const doc = (await (await t.fetch('/v1/openapi.json')).json()) as any;
    const schemas = doc.components.schemas;
    for (const [name, s] of Object.entries<any>(schemas)) {
      if (name.endsWith('Request')) {
        expect(s.additionalProperties, name).toBe(false);
        for (const [prop, p] of Object.entries<any>(s.properties)) {
          // every free string states "no NUL" (ids, dates and enums cannot hold one anyway)
          if (p.type === 'string' && !p.format && !p.enum) {
            const valid = String(p.example ?? 'x');
            expect(new RegExp(p.pattern).test(valid), `${name}.${prop}`).toBe(true);
            expect(new RegExp(p.pattern).test(`${valid}\u0000`), `${name}.${prop}`).toBe(false);
          }
        }
      }
      for (const [prop, p] of Object.entries<any>(s.properties ?? {})) {
        if (/At$/.test(prop)) expect(p.format, `${name}.${prop}`).toBe('date-time');
      }
    }
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const p of op.parameters ?? []) {
          const param = p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p;
          expect(param.description, `${op.operationId} ${param.name}`).toBeTruthy();
        }
      }
    }
    // the cross-field rule JSON Schema cannot state across query parameters is in the description
    expect(doc.paths['/v1/rooms/{roomId}/files'].post.description).toMatch(/message or a task of the room, not both/);
  });

  it('makes the error code an enum of the catalog and lists, per operation and status, the codes MCP lists too', async () => {
    await using t = await sharedTestServer();
    const doc = (await (await t.fetch('/v1/openapi.json')).json()) as any;
    expect(doc.components.schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_STATUS));
    expect(doc.components.schemas.ErrorCode.enum).toContain('rule_violation');
    const tools = buildToolCatalog();
    for (const p of listProcedures()) {
      const op = doc.paths[p.meta.http.path][p.meta.http.method.toLowerCase()];
      const byStatus = errorCodesOf(p.meta, 'rest');
      const documented = Object.fromEntries(
        Object.entries<any>(op.responses)
          .filter(([s]) => Number(s) >= 400)
          .map(([s, r]) => {
            const shared = doc.components.responses[r.$ref.split('/').pop()];
            return [s, shared.content['application/json'].schema.allOf[1].properties.error.properties.code.enum];
          }),
      );
      expect(documented, p.meta.tool.name).toEqual(
        Object.fromEntries(Object.entries(byStatus).map(([s, c]) => [s, c])),
      );
      // every status lists codes whose default status it is, or an override the operation declares
      for (const [s, codes] of Object.entries(byStatus))
        for (const c of codes) expect([ERROR_STATUS[c], 422], `${c} ${s}`).toContain(Number(s));
      // the tool lists its own codes: the same list but the HTTP body read (413, 408, 415), which an MCP tool call
      // does not do, and the codes every call or every write answers (named once in the MCP guide)
      // an operation served over REST only has no tool to compare with
      if (p.meta.restOnly) continue;
      const mcp = (tools.get(p.meta.tool.name)!.tool._meta?.[ERRORS_META] ?? {}) as Record<string, string[]>;
      expect(mcp, p.meta.tool.name).toEqual(ownErrorCodesOf(p.meta, 'mcp'));
      const common = [
        ...EVERY_CALL_CODES,
        'idempotency_key_in_use',
        'idempotency_key_reused',
        'unsupported_media_type',
        'payload_too_large',
        'request_timeout',
      ] as string[];
      const pairs = (o: Record<string, string[]>) =>
        Object.entries(o)
          .flatMap(([s, codes]) => codes.map((c) => `${s} ${c}`))
          .sort();
      // and, for a tool of a room, the 404s every such tool answers; one of these codes stays where the operation
      // gives it another status than the catalog's, and a body-read code where the operation declares it
      const inRoom = p.meta.http.path.startsWith('/v1/rooms/{roomId}');
      const roomCodes = inRoom ? ['not_found', 'room_not_found'] : [];
      // and, for a write in a room, the 403 every such write answers (its role in the room)
      if (inRoom && p.meta.kind === 'write') roomCodes.push('forbidden');
      const declared = (p.meta.errors ?? []).map((e) =>
        typeof e === 'string' ? `${ERROR_STATUS[e]} ${e}` : `${e.status} ${e.code}`,
      );
      const kept = (sc: string) => {
        const [status, code] = sc.split(' ') as [string, keyof typeof ERROR_STATUS];
        if (roomCodes.includes(code)) return ERROR_STATUS[code] !== Number(status);
        return !common.includes(code) || declared.includes(sc);
      };
      expect(pairs(mcp), p.meta.tool.name).toEqual(pairs(byStatus).filter(kept));
    }
    expect(doc.paths['/v1/rooms/{roomId}/tasks'].post.responses['400'].$ref).toBe(
      '#/components/responses/ValidationErrorOrRuleViolation',
    );
    expect(doc.paths['/v1/rooms/{roomId}'].get.responses['404'].$ref).toBe(
      '#/components/responses/NotFoundOrRoomNotFound',
    );
  });

  it('describes files as they behave: any media type up, the stored type down', async () => {
    await using t = await sharedTestServer();
    const doc = (await (await t.fetch('/v1/openapi.json')).json()) as any;
    const files = '/v1/rooms/{roomId}/files';
    expect(doc.paths[files].post.requestBody.content).toEqual({
      '*/*': { schema: { type: 'string', format: 'binary' } },
    });
    expect(doc.paths[`${files}/{fileId}/content`].get.responses['200'].content).toEqual({
      '*/*': { schema: { type: 'string', format: 'binary' } },
    });
    const w = await createWorld(t.rt);
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const up = await t.fetch(`/v1/rooms/${w.roomId}/files?filename=dot.png`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'image/png' },
      body: bytes,
    });
    expect(up.status).toBe(201);
    const file = (await up.json()) as any;
    expect(file.contentType).toBe('image/png');
    const down = await t.fetch(`/v1/rooms/${w.roomId}/files/${file.id}/content`, {
      headers: { authorization: `Bearer ${w.key}` },
    });
    expect(down.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await down.arrayBuffer())).toEqual(bytes);
  });

  it('serves a reference page at /docs', async () => {
    await using t = await sharedTestServer();
    const res = await t.fetch('/docs');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('/v1/openapi.json');
    expect(html).toContain('/docs/standalone.js');
    expect((await t.fetch('/docs/standalone.js')).status).toBe(200);
    // none of the vendor's UI that does not apply, the API-key scheme preselected for "try it"
    const config = JSON.parse(/createApiReference\('#app', (\{[\s\S]*?\})\)\s*<\/script>/.exec(html)![1]);
    expect(config).toMatchObject({
      agent: { disabled: true },
      mcp: { disabled: true },
      hideClientButton: true,
      showDeveloperTools: 'never',
      telemetry: false,
      authentication: { preferredSecurityScheme: 'apiKey' },
    });
  });
});

describe('unknown input is refused, as the document says, on REST and MCP', () => {
  it('REST: an unknown body field, an unknown query parameter, or a body field sent in the query is 400 validation_error; nothing is created', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const messages = `/v1/rooms/${w.roomId}/messages`;
    const extraField = await call(t, 'POST', messages, { key: w.key, body: { body: 'hi', pinned: true } });
    expect(extraField.status).toBe(400);
    expect(extraField.body.error.code).toBe('validation_error');
    expect(extraField.body.error.details.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['pinned'] });
    const unknownQuery = await call(t, 'GET', `${messages}?limit=5&sort=desc`, { key: w.key });
    expect(unknownQuery.status).toBe(400);
    expect(unknownQuery.body.error).toMatchObject({
      code: 'validation_error',
      details: { issues: [{ code: 'unrecognized_keys', keys: ['sort'] }] },
    });
    // a body field in the query string is not taken for the body
    const inQuery = await call(t, 'POST', `${messages}?body=sneaky`, { key: w.key, body: { body: 'hi' } });
    expect(inQuery.status).toBe(400);
    expect(inQuery.body.error.details.issues[0].keys).toEqual(['body']);
    // nor a path parameter repeated in the query
    const pathInQuery = await call(t, 'GET', `${messages}?roomId=${w.roomId}`, { key: w.key });
    expect(pathInQuery.status).toBe(400);
    // an upload takes filename, messageId and taskId in the query, not its content type
    const upload = await t.fetch(`/v1/rooms/${w.roomId}/files?filename=a.txt&contentType=text/html`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(upload.status).toBe(400);
    expect(((await upload.json()) as any).error.details.issues[0].keys).toEqual(['contentType']);
    expect((await call(t, 'GET', messages, { key: w.key })).body.data).toEqual([]);
    // what the document allows still works, with the same answer as before
    const ok = await call(t, 'POST', messages, { key: w.key, body: { body: '  indented\n' } });
    expect(ok.status).toBe(201);
    expect(ok.body.body).toBe('  indented\n');
  });

  it('MCP: an unknown argument is refused with the same validation_error', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const r: any = await c.callTool({
      name: 'create_message',
      arguments: { roomId: w.roomId, body: 'hi', pinned: true },
    });
    expect(r.isError).toBe(true);
    // an error result carries its envelope in the text content (the output schema describes success only)
    expect(r.structuredContent).toBeUndefined();
    const body = bodyOf(r);
    expect(body.error.code).toBe('validation_error');
    expect(body.error.message).toMatch(/pinned/);
    expect(body.error.details.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['pinned'] });
  });
});
