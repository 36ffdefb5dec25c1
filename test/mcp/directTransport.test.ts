import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { directRequestOf } from '../../src/fastpaths/directJsonTransport.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from './mcpClient.js';

const valid = { accept: 'application/json, text/event-stream', contentType: 'application/json', protocolVersion: LATEST_PROTOCOL_VERSION };
const request = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_me', arguments: {} } };

describe('the direct JSON path of /mcp (src/fastpaths/directJsonTransport.ts)', () => {
  it('takes only a single valid JSON-RPC request with the headers the SDK transport demands', () => {
    expect(directRequestOf(valid, request)).toEqual(request);
    expect(directRequestOf({ ...valid, protocolVersion: undefined }, request)).toEqual(request);
    expect(directRequestOf({ ...valid, contentType: 'application/json; charset=utf-8' }, request)).toEqual(request);
    // everything else is left to the SDK's transport, which words the refusal
    expect(directRequestOf({ ...valid, accept: 'application/json' }, request)).toBeNull();
    expect(directRequestOf({ ...valid, accept: undefined }, request)).toBeNull();
    expect(directRequestOf({ ...valid, contentType: 'text/plain' }, request)).toBeNull();
    expect(directRequestOf({ ...valid, contentType: 'application/jsonx' }, request)).toBeNull();
    expect(directRequestOf({ ...valid, protocolVersion: '1999-01-01' }, request)).toBeNull();
    expect(directRequestOf(valid, [request])).toBeNull();
    expect(directRequestOf(valid, { jsonrpc: '2.0', method: 'notifications/initialized' })).toBeNull();
    expect(directRequestOf(valid, { jsonrpc: '2.0', id: 1, result: {} })).toBeNull();
    expect(directRequestOf(valid, { jsonrpc: '1.0', id: 1, method: 'tools/list' })).toBeNull();
    expect(directRequestOf(valid, { hello: 'world' })).toBeNull();
    expect(directRequestOf(valid, null)).toBeNull();
    expect(directRequestOf(valid, 'tools/list')).toBeNull();
  });

  it("answers a request as the SDK's transport answers the same request in a batch of one", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const direct = await postMcp(t, toolCall('get_me', {}, 3), { token: w.key });
    const viaSdk = await postMcp(t, [toolCall('get_me', {}, 3)], { token: w.key });
    for (const r of [direct, viaSdk]) {
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.text));
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('svc-api-units-cost')).toBe('1');
      expect(r.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
      expect(r.body.result._meta['svc/requestId']).toBe(r.headers.get('x-request-id'));
    }
    const withoutId = (b: any) => JSON.parse(JSON.stringify(b).replaceAll(/req_[0-9A-Z]+/g, 'req'));
    expect(withoutId(direct.body)).toEqual(withoutId(viaSdk.body));
    expect(direct.body).toMatchObject({ jsonrpc: '2.0', id: 3, result: { structuredContent: { id: w.owner.id } } });

    // protocol errors come from the same MCP server on both paths
    const unknownMethod = { jsonrpc: '2.0', id: 'x', method: 'no/such', params: {} };
    const a = await postMcp(t, unknownMethod, { token: w.key });
    const b = await postMcp(t, [unknownMethod], { token: w.key });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect(a.body.error.code).toBe(-32601);

    // initialize answers directly too, without a session
    const init = await postMcp(t, {
      jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }, { token: w.key });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);

    // one audit row per tool call, whichever path answered it
    const rows = (await listAudit(t.rt.services, {})).filter((r) => r.surface === 'mcp' && r.routePattern === 'get_me');
    expect(rows).toHaveLength(2);
  });
});
