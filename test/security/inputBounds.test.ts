import { describe, expect, it, vi } from 'vitest';
import { sql } from '../../db/sql.js';
import { buildOpenApiDocument } from '../../rest/openapi.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { startReceiver } from '../webhooks/helpers.js';

// Penetration test 3 (SECURITY.md "Penetration test 3: input bounds"): bad input that stalled or killed the
// process, flooded the log, or was stored otherwise than answered.

/** `{"k0":0,"k1":0,…}` members, as JSON text. */
const floodMembers = (n: number) => Array.from({ length: n }, (_, i) => `"unknown_key_${i}":0`).join(',');
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

async function rawMcp(t: TestServer, key: string, text: string) {
  const res = await t.fetch('/mcp', {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
    body: text,
  });
  const body = await res.text();
  return { status: res.status, text: body, json: JSON.parse(body) };
}

const count = async (t: TestServer, table: string) =>
  Number((await sql<{ n: number }>(t.rt.ds, `SELECT COUNT(*) AS "n" FROM "${table}"`)).rows[0].n);

describe('a flood of unknown keys answers a small validation_error and the server stays up', () => {
  it('MCP: a tools/call whose arguments hold more members than any input may is refused before it is parsed', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // 150,000 keys (2.9 MB): more than the cap on members, far less than the gigabytes the finding needed
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_rooms","arguments":{${floodMembers(150_000)}}}}`;
    // three at once (the finding's fatal case), then the server still answers
    for (const r of await Promise.all([1, 2, 3].map(() => rawMcp(t, w.key, text)))) {
      expect(r.status).toBe(400);
      expect(r.text.length).toBeLessThan(1024);
      expect(r.json.error.message).toMatch(/more than 10000 members/);
    }
    expect((await t.fetch('/healthz')).status).toBe(200);
  });

  it('MCP: unknown keys under that cap answer a tool error naming five of them and their count', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_rooms","arguments":{${floodMembers(9_000)}}}}`;
    const r = await rawMcp(t, w.key, text);
    expect(r.status).toBe(200);
    expect(r.text.length).toBeLessThan(2048);
    expect(r.json.result.isError).toBe(true);
    const env = JSON.parse(r.json.result.content[0].text);
    expect(env.error.code).toBe('validation_error');
    expect(env.error.details.issues).toHaveLength(1);
    expect(env.error.details.issues[0]).toMatchObject({ code: 'unrecognized_keys', keyCount: 9_000 });
    expect(env.error.details.issues[0].keys).toHaveLength(5);
    expect(env.error.message).toContain('(and 8995 more)');
  });

  it('REST: the same, in the envelope; nothing is created', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const rooms = await count(t, 'rooms');
    for (const [n, status] of [
      [9_000, 400],
      [45_000, 400],
    ] as const) {
      const res = await t.fetch('/v1/rooms', {
        method: 'POST',
        headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/json' },
        body: `{"name":"Flood",${floodMembers(n)}}`,
      });
      const text = await res.text();
      expect(res.status).toBe(status);
      expect(text.length, `${n} keys`).toBeLessThan(2048);
      expect(JSON.parse(text).error.code).toBe('validation_error');
    }
    expect(await count(t, 'rooms')).toBe(rooms);
  });

  it('JSON-RPC errors do not echo a long tool name or resource URI whole', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const r = await postMcp(t, toolCall('x'.repeat(900_000)), { token: w.key });
    expect(r.text.length).toBeLessThan(2048);
    expect(r.body.error.code).toBe(-32602);
    const read = await postMcp(
      t,
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: `svc://${'x'.repeat(500_000)}` } },
      { token: w.key },
    );
    expect(read.text.length).toBeLessThan(2048);
    expect(read.body.error.code).toBe(-32602);
  });

  it('REST: a flood of unknown query parameters names five of them', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const q = Array.from({ length: 400 }, (_, i) => `p${i}=1`).join('&');
    const r = await call(t, 'GET', `/v1/rooms?${q}`, { key: w.key });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].keys).toHaveLength(5);
    expect(r.body.error.details.issues[0].keyCount).toBe(400);
    expect(JSON.stringify(r.body).length).toBeLessThan(2048);
  });
});

describe('agent-run output is bounded, and so is a page of runs', () => {
  it('complete_agent_run refuses an output over 64 KiB as JSON; the run is unchanged', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const rx = await startReceiver([{ status: 202 }]);
    await using _rx = rx;
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const run = await startRun(t, key, w.roomId, c.id);
    await invokeDue(t.rt);
    const token = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;
    const complete = (output: unknown) =>
      postMcp(
        t,
        toolCall('complete_agent_run', { roomId: w.roomId, runId: run.body.id, status: 'succeeded', output }),
        { token },
      );
    const big = await complete({ text: 'x'.repeat(64 * 1024) });
    expect(big.body.result.isError).toBe(true);
    expect(JSON.parse(big.body.result.content[0].text).error).toMatchObject({
      code: 'validation_error',
      details: { issues: [{ path: 'output' }] },
    });
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs/${run.body.id}`, { key })).body).toMatchObject({
      status: 'running',
      output: null,
    });
    const ok = await complete({ text: 'x'.repeat(60 * 1024) });
    expect(ok.body.result.structuredContent).toMatchObject({ status: 'succeeded' });
  });

  it('a page of runs ends early once their outputs pass 512 KiB, and the cursor carries on', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    const key = await invokerKey(t.rt, w);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await startRun(t, key, w.roomId, c.id)).body.id);
    const output = JSON.stringify({ text: 'y'.repeat(60 * 1024) });
    await sql(t.rt.ds, 'UPDATE "agent_runs" SET "status" = ?, "output" = ?', ['succeeded', output]);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await t.fetch(
        `/v1/rooms/${w.roomId}/agent-runs?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: { authorization: `Bearer ${key}` } },
      );
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(text.length).toBeLessThan(600 * 1024);
      const page = JSON.parse(text);
      seen.push(...page.data.map((r: { id: string }) => r.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(ids);
  });
});

describe('a malformed percent-encoding in a path', () => {
  it('answers 400 in the envelope and logs no error', async () => {
    await using t = await startTestServer();
    const error = vi.spyOn(t.rt.services.log, 'error');
    const warn = vi.spyOn(t.rt.services.log, 'warn');
    for (const p of ['/v1/rooms/%ZZ', '/v1/rooms/%E0%A4%A', '/v1/rooms/room_1/tasks/%']) {
      const r = await call(t, 'GET', p);
      expect(r.status, p).toBe(400);
      expect(r.body.error.code, p).toBe('validation_error');
    }
    expect(error).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('strings are well-formed Unicode, or refused', () => {
  it('REST: a lone surrogate in a JSON string, value or key, is a validation_error; nothing is stored', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const body of ['{"body":"ok \\ud800 end"}', '{"body":"ok \\udfff"}', '{"body":"ok","\\ud800":1}']) {
      const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body });
      expect(r.status, body).toBe(400);
      expect(r.body.error, body).toMatchObject({ code: 'validation_error', details: { reason: 'lone_surrogate' } });
    }
    // a pair is a character, and is kept
    const pair = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
      key: w.key,
      body: '{"body":"ok \\ud83d\\ude00"}',
    });
    expect(pair.body.body).toBe('ok 😀');
    expect(await count(t, 'messages')).toBe(1);
  });

  it("MCP: the same in a tool's arguments", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const r = await rawMcp(
      t,
      w.key,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_message","arguments":{"roomId":"${w.roomId}","body":"ok \\ud800 end"}}}`,
    );
    expect(r.json.result.isError).toBe(true);
    expect(JSON.parse(r.json.result.content[0].text).error).toMatchObject({
      code: 'validation_error',
      details: { reason: 'lone_surrogate' },
    });
    expect(await count(t, 'messages')).toBe(0);
  });

  it('REST: a query parameter whose percent-encoding is not UTF-8 is refused, not read as U+FFFD', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const search = await call(t, 'GET', '/v1/search?q=%ED%A0%80', { key: w.key });
    expect(search.status).toBe(400);
    expect(search.body.error.message).toContain('q: is not percent-encoded UTF-8');
    const upload = await t.fetch(`/v1/rooms/${w.roomId}/files?filename=a%FF.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(upload.status).toBe(400);
    expect(await count(t, 'files')).toBe(0);
  });
});

describe('numeric query parameters are plain decimal integers', () => {
  it('refuses exponents, points, signs, hex and spaces, naming the parameter; a repeated parameter says so', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const v of ['1e2', '1.0', '%2B5', '+5', '0x10', '%205', '5%20', '', '-1']) {
      const r = await call(t, 'GET', `/v1/rooms?limit=${v}`, { key: w.key });
      expect(r.status, v).toBe(400);
      expect(r.body.error.code, v).toBe('validation_error');
      expect(r.body.error.message, v).toMatch(/^Invalid input: limit: /);
    }
    const twice = await call(t, 'GET', '/v1/rooms?limit=5&limit=6', { key: w.key });
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toBe(
      'Invalid input: limit: is given more than once; give it once; for example 50.',
    );
    expect(JSON.stringify(twice.body)).not.toContain('NaN');
    expect((await call(t, 'GET', '/v1/rooms?limit=05', { key: w.key })).status).toBe(200);
  });

  it('MCP: limit is a JSON integer, not a string to coerce', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const limit of ['0x10', '16', 1.5]) {
      const r = await postMcp(t, toolCall('list_rooms', { limit }), { token: w.key });
      expect(r.body.result.isError, String(limit)).toBe(true);
    }
    expect((await postMcp(t, toolCall('list_rooms', { limit: 16 }), { token: w.key })).body.result.isError).toBeFalsy();
  });
});

describe('every stored text field has a maximum length', () => {
  /** The string schemas of an operation's input (parameters and JSON body), with their paths. */
  function inputStrings(doc: any, op: any): { path: string; schema: any }[] {
    const resolve = (s: any): any =>
      s?.$ref
        ? resolve(
            s.$ref
              .split('/')
              .slice(1)
              .reduce((o: any, k: string) => o[k], doc),
          )
        : s;
    const out: { path: string; schema: any }[] = [];
    const walk = (s: any, path: string) => {
      s = resolve(s);
      if (!s) return;
      for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(sub, path);
      if (s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'))) out.push({ path, schema: s });
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
      if (s.items) walk(s.items, `${path}[]`);
    };
    for (const p of op.parameters ?? []) walk(resolve(p).schema, resolve(p).name);
    walk(op.requestBody?.content?.['application/json']?.schema, 'body');
    return out;
  }

  it("shows maxLength in the OpenAPI document on every string an operation takes (enums and a file's bytes aside)", () => {
    const doc: any = buildOpenApiDocument('http://localhost');
    const unbounded: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const s of inputStrings(doc, op)) {
          if (s.schema.enum || s.schema.const !== undefined || s.schema.format === 'binary') continue;
          if (typeof s.schema.maxLength !== 'number') unbounded.push(`${method.toUpperCase()} ${path} ${s.path}`);
        }
      }
    }
    expect(unbounded).toEqual([]);
  });
});
