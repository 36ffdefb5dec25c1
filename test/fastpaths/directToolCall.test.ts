import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, JSONRPCRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { DirectJsonTransport } from '../../src/fastpaths/directJsonTransport.js';
import { directAnswer, directToolCallOf } from '../../src/fastpaths/directToolCall.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';

// src/fastpaths/directToolCall.ts answers a plain tools/call without an MCP `Server`. Every request it takes must be
// one the SDK's schemas accept with the same name and arguments, and every answer must be the one the SDK's server
// gives: for each kind of handler outcome (below, against a real `Server`), and end to end through /mcp (a plain
// POST, taken by the fast path, against the same call in a batch of one, which the SDK's transport and server answer).

const headers = { accept: 'application/json, text/event-stream', contentType: 'application/json', protocolVersion: LATEST_PROTOCOL_VERSION };
const plain = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_me', arguments: { a: 1 } } };

/** What the SDK's parse of a request hands a tools/call handler (null when the SDK's schemas refuse it). */
function sdkView(body: unknown): { id: unknown; name: string; arguments: Record<string, unknown> } | null {
  const message = JSONRPCRequestSchema.safeParse(body);
  if (!message.success) return null;
  const call = CallToolRequestSchema.safeParse(message.data);
  if (!call.success) return null;
  return { id: message.data.id, name: call.data.params.name, arguments: call.data.params.arguments ?? {} };
}

describe('which requests the direct tool call takes', () => {
  it('takes a plain tools/call, and leaves everything else to the MCP server', () => {
    expect(directToolCallOf(headers, plain)).toEqual({ id: 7, name: 'get_me', arguments: { a: 1 } });
    expect(directToolCallOf(headers, { ...plain, id: 'x', params: { name: 'get_me' } })).toEqual({ id: 'x', name: 'get_me', arguments: {} });
    const refused: unknown[] = [
      [plain], { ...plain, method: 'tools/list' }, { ...plain, jsonrpc: '1.0' }, { ...plain, id: 1.5 }, { ...plain, id: null },
      { ...plain, id: 2 ** 53 }, { ...plain, extra: 1 }, { ...plain, params: { ...plain.params, _meta: { progressToken: 1 } } },
      { ...plain, params: { ...plain.params, _meta: {} } }, { ...plain, params: { ...plain.params, task: { ttl: 1 } } },
      { ...plain, params: { name: 1 } }, { ...plain, params: { name: 'get_me', arguments: [] } }, { ...plain, params: { name: 'get_me', arguments: null } },
      { ...plain, params: null }, { jsonrpc: '2.0', method: 'tools/call', params: plain.params }, JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_me","arguments":{"__proto__":{"x":1}}}}'),
      null, 'tools/call',
    ];
    for (const body of refused) expect(directToolCallOf(headers, body), JSON.stringify(body)).toBeNull();
    // the headers the SDK's transport demands before it dispatches (directRequestOf's own checks)
    expect(directToolCallOf({ ...headers, accept: 'application/json' }, plain)).toBeNull();
    expect(directToolCallOf({ ...headers, contentType: 'text/plain' }, plain)).toBeNull();
    expect(directToolCallOf({ ...headers, protocolVersion: '1999-01-01' }, plain)).toBeNull();
    expect(directToolCallOf({ ...headers, protocolVersion: undefined }, plain)).not.toBeNull();
  });

  it('takes only requests the SDK accepts, and reads the same id, name and arguments from them', () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    // mostly absent, sometimes any JSON value
    const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: arb, weight: 1 });
    const mostly = <T>(usual: T, arb: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: fc.constant(usual), weight: 4 }, { arbitrary: arb, weight: 1 });
    const message = fc.record({
      jsonrpc: mostly('2.0', json), method: mostly('tools/call', fc.constantFrom('tools/list', 'tools/call ')),
      id: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constantFrom(null, 2 ** 53, -0), json),
      name: mostly('get_me', fc.oneof(fc.string(), json)), arguments: fc.oneof(fc.constant(undefined), fc.dictionary(fc.string(), json), json),
      meta: rarely(fc.dictionary(fc.string(), json)), task: rarely(json), extraParam: rarely(json), extra: rarely(json), params: rarely(json),
    }).map((m) => ({
      jsonrpc: m.jsonrpc, id: m.id, method: m.method, extra: m.extra,
      params: m.params ?? { name: m.name, arguments: m.arguments, _meta: m.meta, task: m.task, other: m.extraParam },
    }));
    let taken = 0;
    fc.assert(fc.property(message, (raw) => {
      const body = JSON.parse(JSON.stringify(raw)) as unknown; // as a POST body arrives: parsed JSON
      const direct = directToolCallOf(headers, body);
      if (!direct) return;
      taken++;
      expect(sdkView(body)).toEqual(direct);
    }), { numRuns: 2000 });
    expect(taken).toBeGreaterThan(20);
  });
});

describe("the direct answer is the SDK server's answer for every kind of handler outcome", () => {
  /** The SDK's own answer: a `Server` whose tools/call handler is `handle`, over the direct JSON transport. */
  async function viaServer(id: string | number, handle: () => Promise<unknown>) {
    const server = new Server({ name: 'mirror', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, handle as never);
    const transport = new DirectJsonTransport();
    await server.connect(transport);
    return transport.exchange({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't' } });
  }
  const outcomes: [string, () => Promise<unknown>][] = [
    ['a result', async () => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: { a: 1 } })],
    ['an error result', async () => ({ content: [{ type: 'text', text: 'no' }], isError: true })],
    ['an McpError', async () => { throw new McpError(-32602, 'Invalid tools/call result: x'); }],
    ['an McpError with data', async () => { throw new McpError(-32000, 'busy', { retry: true }); }],
    ['an Error', async () => { throw new Error('boom'); }],
    ['an Error with a non-integer code', async () => { throw Object.assign(new Error('odd'), { code: 'EODD' }); }],
    ['an object without a message', async () => { throw { code: 5 }; }],
    ['a thrown string', async () => { throw 'text'; }],
  ];
  it.each(outcomes)('%s', async (_label, handle) => {
    for (const id of [3, 'req-3']) {
      const direct = await directAnswer(id, new AbortController().signal, handle);
      expect(direct).toEqual(await viaServer(id, handle));
    }
  });

  it('answers nothing once the request was aborted, whatever the handler did', async () => {
    const gone = new AbortController();
    gone.abort();
    expect(await directAnswer(1, gone.signal, async () => ({ content: [] }))).toBeNull();
    expect(await directAnswer(1, gone.signal, async () => { throw new Error('late'); })).toBeNull();
  });
});

describe('/mcp answers a plain tools/call on the direct path as its MCP server answers it', () => {
  /** Ids, request ids and times differ between two calls; everything else must not. */
  const normalized = (text: string) => text.replaceAll(/\b[a-z]+_[0-9A-Za-z]{10,}\b/g, 'ID').replaceAll(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME');
  const SAME_HEADERS = ['content-type', 'svc-api-units-cost', 'ratelimit-limit', 'ratelimit-policy', 'x-content-type-options', 'cache-control', 'vary'];

  it('for reads, writes, replays, refusals, errors and content blocks, byte for byte', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const upload = await postMcp(t, toolCall('upload_file', { roomId: w.roomId, filename: 'a.txt', contentType: 'text/plain', text: 'hello' }), { token: w.key });
    const fileId = upload.body.result.structuredContent.id as string;
    const calls: [string, Record<string, unknown>][] = [
      ['get_me', {}],
      ['list_messages', { roomId: w.roomId, limit: 5 }],
      ['create_message', { roomId: w.roomId, body: 'hi' }],
      ['create_message', { roomId: w.roomId, body: 'once', idempotencyKey: 'k-direct' }],
      ['list_messages', { roomId: w.roomId, limit: 0 }],
      ['list_messages', { roomId: w.roomId, unknown: 1 }],
      ['get_room', { roomId: 'room_doesnotexist0000' }],
      ['get_file_content', { roomId: w.roomId, fileId }],
    ];
    for (const [name, args] of calls) {
      await postMcp(t, toolCall(name, args, 0), { token: w.key }); // a key's first use, so both paths below replay it
      for (let id = 1; id <= 2; id++) {
        const direct = await postMcp(t, toolCall(name, args, id), { token: w.key });
        const viaServer = await postMcp(t, [toolCall(name, args, id)], { token: w.key });
        const label = `${name} ${JSON.stringify(args)}`;
        expect(direct.status, label).toBe(200);
        expect(normalized(direct.text), label).toBe(normalized(viaServer.text));
        for (const h of SAME_HEADERS) expect(direct.headers.get(h), `${label}: ${h}`).toBe(viaServer.headers.get(h));
        expect(direct.headers.get('x-request-id'), label).toMatch(/^req_/);
      }
    }
    // every call audited once, whichever path took it; the idempotency key replayed on both paths: one message
    const rows = await listAudit(t.rt.services, {});
    expect(rows.filter((r) => r.surface === 'mcp' && r.routePattern === 'create_message').length).toBe(10);
    const page = await postMcp(t, toolCall('list_messages', { roomId: w.roomId, limit: 50 }), { token: w.key });
    expect(page.body.result.structuredContent.data.filter((m: { body: string }) => m.body === 'once')).toHaveLength(1);
  });

  it('leaves an unknown tool to the MCP server, which refuses and audits it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const r = await postMcp(t, toolCall('no_such_tool', {}, 9), { token: w.key });
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'Unknown tool: no_such_tool' } });
    const rows = (await listAudit(t.rt.services, {})).filter((x) => x.routePattern === '(unknown tool)');
    expect(rows).toHaveLength(1);
  });
});
