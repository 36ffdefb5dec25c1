import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DirectJsonTransport, directRequestOf } from '../../src/fastpaths/directJsonTransport.js';

// src/fastpaths/directJsonTransport.ts answers a POST itself only when the SDK's Streamable HTTP transport would
// accept it; run against the SDK's own transport on a grid of headers and bodies, every POST it takes must be one
// the SDK answers with 200 and the same JSON, and every POST the SDK refuses must be left to the SDK.

/** A small MCP server, as mcp/createMcpServer.ts builds one per request (stateless). */
function mcpServer(): Server {
  const server = new Server({ name: 'mirror', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: 'text', text: JSON.stringify(r.params.arguments ?? {}) }] }));
  return server;
}

/** The SDK's transport in the mode /mcp uses for JSON answers; status, content type and parsed body. */
async function viaSdk(headers: Record<string, string>, body: string) {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await mcpServer().connect(transport);
  const r = await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body }));
  const text = await r.text();
  await transport.close();
  return { status: r.status, type: r.headers.get('content-type'), body: text ? (JSON.parse(text) as unknown) : null };
}

async function viaDirect(request: NonNullable<ReturnType<typeof directRequestOf>>) {
  const transport = new DirectJsonTransport();
  await mcpServer().connect(transport);
  const answer = await transport.exchange(request);
  await transport.close();
  return answer;
}

const ACCEPTS = [undefined, 'application/json, text/event-stream', 'text/event-stream, application/json;q=0.9', 'application/json', '*/*'];
const TYPES = [undefined, 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/jsonx'];
const VERSIONS = [undefined, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS.at(-1)!, '1999-01-01'];
const BODIES: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { x: 1 } } },
  { jsonrpc: '2.0', id: 2, method: 'no/such', params: {} },
  { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
  [{ jsonrpc: '2.0', id: 4, method: 'tools/list' }],
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 5, result: {} },
  { jsonrpc: '1.0', id: 6, method: 'tools/list' },
  { hello: 'world' },
  null,
  'tools/list',
];

describe('the direct JSON transport takes only what the SDK transport accepts, and answers alike', () => {
  it('on a grid of Accept, Content-Type, protocol version and body', async () => {
    let taken = 0;
    let refused = 0;
    for (const accept of ACCEPTS) for (const contentType of TYPES) for (const protocolVersion of VERSIONS) for (const body of BODIES) {
      const label = JSON.stringify({ accept, contentType, protocolVersion, body });
      const headers: Record<string, string> = {};
      if (accept !== undefined) headers.accept = accept;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (protocolVersion !== undefined) headers['mcp-protocol-version'] = protocolVersion;
      const direct = directRequestOf({ accept, contentType, protocolVersion }, body);
      const sdk = await viaSdk(headers, JSON.stringify(body));
      if (sdk.status >= 400) {
        refused++;
        expect(direct, `the SDK refuses ${label} with ${sdk.status}: the direct path must leave it to the SDK`).toBeNull();
      }
      if (direct) {
        taken++;
        expect(sdk.status, label).toBe(200);
        expect(sdk.type, label).toBe('application/json');
        expect(await viaDirect(direct), label).toEqual(sdk.body);
      }
    }
    // the grid holds both kinds (so the comparison above compared something)
    expect(taken).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(100);
  });
});

describe('DirectJsonTransport after its exchange', () => {
  it('keeps no reference to the answer it delivered (a page of results is not kept alive, nor promoted by V8)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const server = mcpServer();
    const transport = new DirectJsonTransport();
    await server.connect(transport);
    let answer: unknown = await transport.exchange({
      jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { page: 'x'.repeat(10_000) } },
    });
    expect(JSON.stringify(answer)).toContain('x'.repeat(100));
    const weak = new WeakRef(answer as object);
    answer = undefined;
    // the server and its transport stay referenced, as they are while the HTTP response lives
    for (let i = 0; i < 5 && weak.deref(); i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(weak.deref()).toBeUndefined();
    expect(server.transport).toBe(transport);
  });
});
