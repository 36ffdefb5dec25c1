import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { call, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { ENVELOPE_2026, bodyOf, connectMcp, post2026, postMcp, toolCall } from './mcpClient.js';

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const mcpRows = async (t: TestServer) =>
  (await listAudit(t.rt.services, { limit: 200 })).filter((a) => a.surface === 'mcp');

describe('MCP 2026-07-28 on /mcp, beside the 2025 revisions', () => {
  it('answers without initialize: server/discover, tools/list, tools/call and resources, with resultType and cache fields', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);

    const discover = await post2026(t, 'server/discover', {}, { token: w.key });
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({
      supportedVersions: expect.arrayContaining(['2026-07-28']),
      capabilities: { tools: {}, resources: {} },
      instructions: expect.stringContaining('rooms'),
      resultType: 'complete',
      ttlMs: expect.any(Number),
      cacheScope: 'public',
    });
    expect(discover.body.result._meta[SERVER_INFO_KEY]).toMatchObject({ name: 'svc', version: expect.any(String) });

    const list = await post2026(t, 'tools/list', {}, { token: w.key });
    expect(list.status).toBe(200);
    const names = list.body.result.tools.map((x: { name: string }) => x.name);
    expect(names).toContain('get_me');
    expect(names).toEqual([...names].sort());
    // the list depends on the credential's scopes: private to it
    expect(list.body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: expect.any(Number),
      cacheScope: 'private',
    });

    const me = await post2026(t, 'tools/call', { name: 'get_me', arguments: {} }, { token: w.key });
    expect(me.status).toBe(200);
    expect(me.headers.get('content-type')).toBe('application/json');
    expect(me.headers.get('svc-api-units-cost')).toBe('1');
    expect(me.body.result).toMatchObject({ resultType: 'complete', structuredContent: { id: w.owner.id } });
    expect(me.body.result._meta['svc/requestId']).toBe(me.headers.get('x-request-id'));
    expect(me.body.result._meta[SERVER_INFO_KEY]).toMatchObject({ name: 'svc' });

    const templates = await post2026(t, 'resources/templates/list', {}, { token: w.key });
    expect(templates.body.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'public',
      resourceTemplates: expect.any(Array),
    });
    const rooms = await post2026(t, 'resources/list', {}, { token: w.key });
    expect(rooms.body.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'private',
      resources: [{ uri: `svc://rooms/${w.roomId}` }],
    });
    const room = await post2026(t, 'resources/read', { uri: `svc://rooms/${w.roomId}` }, { token: w.key });
    expect(room.body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      contents: [{ uri: `svc://rooms/${w.roomId}` }],
    });
    // a resource not found is -32602 (2026-07-28 "Resources")
    const missing = await post2026(t, 'resources/read', { uri: 'svc://nothing' }, { token: w.key });
    expect(missing.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Resource not found/) });

    // same pipeline as every tool call: one audit row under the tool's name, surface mcp
    const rows = await mcpRows(t);
    expect(rows.filter((r) => r.routePattern === 'get_me')).toHaveLength(1);
    expect(rows.filter((r) => r.routePattern === 'get_room')).toHaveLength(1);
  });

  it('keeps serving 2025-11-25, 2025-06-18 and 2025-03-26 clients with initialize on the same URL', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const init = await postMcp(
        t,
        {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        },
        { token: w.key, headers: { 'mcp-protocol-version': version } },
      );
      expect(init.status, version).toBe(200);
      expect(init.body.result).toMatchObject({ protocolVersion: version, serverInfo: { name: 'svc' } });
      expect(init.body.result.resultType).toBeUndefined();
      const me = await postMcp(t, toolCall('get_me'), { token: w.key, headers: { 'mcp-protocol-version': version } });
      expect(me.body.result.structuredContent.id, version).toBe(w.owner.id);
      // no 2026 fields on a 2025 answer
      expect(me.body.result.resultType).toBeUndefined();
      expect(me.body.result._meta[SERVER_INFO_KEY]).toBeUndefined();
    }
    await using c = await connectMcp(t, { token: w.key });
    expect(bodyOf(await c.callTool({ name: 'get_me', arguments: {} })).id).toBe(w.owner.id);
  });

  it('refuses a tool call whose scope the credential lacks with the scope challenge, as on 2025', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const narrow = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'me:read'],
    });
    const r = await post2026(
      t,
      'tools/call',
      { name: 'create_message', arguments: { roomId: w.roomId, body: 'hi' } },
      { token: narrow.token },
    );
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:tools messages:write"/,
    );
    // headers that contradict the body are refused as such first, the scope never looked at
    const mismatch = await post2026(
      t,
      'tools/call',
      { name: 'create_message', arguments: { roomId: w.roomId, body: 'hi' } },
      {
        token: narrow.token,
        headers: { 'mcp-name': 'get_me' },
      },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe(-32020);
    const list = await post2026(t, 'tools/list', {}, { token: narrow.token });
    expect(list.body.result.tools.map((x: { name: string }) => x.name)).toEqual(['get_me']);
    const none = await post2026(t, 'tools/list', {});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
  });

  describe('bad input: the spec error and status, one audit row, never a 500, nothing executed', () => {
    const write = (roomId: string) => ({ name: 'create_message', arguments: { roomId, body: 'must not be posted' } });
    const b64 = (s: string) => `=?base64?${Buffer.from(s).toString('base64')}?=`;
    const cases: {
      name: string;
      send: (t: TestServer, key: string, roomId: string) => ReturnType<typeof postMcp>;
      status: number;
      code: number;
    }[] = [
      {
        name: "an Mcp-Name other than the body's",
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-name': 'get_me' } }),
      },
      {
        name: "an Mcp-Method other than the body's",
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-method': 'tools/list' } }),
      },
      {
        name: 'no Mcp-Name',
        status: 400,
        code: -32020,
        send: (t, key, room) => post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-name': '' } }),
      },
      {
        name: 'no Mcp-Method',
        status: 400,
        code: -32020,
        send: (t, key, room) => post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-method': '' } }),
      },
      {
        name: 'no MCP-Protocol-Version',
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-protocol-version': '' } }),
      },
      {
        name: 'a 2025 MCP-Protocol-Version over a 2026 envelope (downgrade)',
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-protocol-version': '2025-11-25' } }),
      },
      {
        name: 'an unknown revision',
        status: 400,
        code: -32022,
        send: (t, key, room) =>
          post2026(
            t,
            'tools/call',
            { ...write(room), _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
            {
              token: key,
              headers: { 'mcp-protocol-version': '2099-01-01' },
            },
          ),
      },
      {
        name: 'an envelope without clientCapabilities',
        status: 400,
        code: -32602,
        send: (t, key, room) =>
          postMcp(
            t,
            {
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { ...write(room), _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
            },
            {
              token: key,
              headers: {
                'mcp-protocol-version': '2026-07-28',
                'mcp-method': 'tools/call',
                'mcp-name': 'create_message',
              },
            },
          ),
      },
      {
        name: 'a base64 Mcp-Name that does not decode',
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-name': '=?base64?!!not base64!!?=' } }),
      },
      {
        name: 'a base64 Mcp-Name of another tool',
        status: 400,
        code: -32020,
        send: (t, key, room) =>
          post2026(t, 'tools/call', write(room), { token: key, headers: { 'mcp-name': b64('get_me') } }),
      },
      {
        name: 'a batch holding a 2026 request',
        status: 400,
        code: -32600,
        send: (t, key, room) =>
          postMcp(
            t,
            [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...write(room), _meta: ENVELOPE_2026 } }],
            {
              token: key,
              headers: { 'mcp-protocol-version': '2026-07-28' },
            },
          ),
      },
      {
        name: 'a batch on 2025-11-25, which has none',
        status: 400,
        code: -32600,
        send: (t, key, room) => postMcp(t, [toolCall('create_message', write(room).arguments)], { token: key }),
      },
      {
        name: 'a batch on 2025-06-18',
        status: 400,
        code: -32600,
        send: (t, key, room) =>
          postMcp(t, [toolCall('create_message', write(room).arguments)], {
            token: key,
            headers: { 'mcp-protocol-version': '2025-06-18' },
          }),
      },
      {
        name: 'an unknown method',
        status: 404,
        code: -32601,
        send: (t, key) => post2026(t, 'no/such', {}, { token: key }),
      },
    ];
    it.each(cases)('$name: $status $code', async (c) => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      const before = (await mcpRows(t)).length;
      const r = await c.send(t, w.key, w.roomId);
      expect(r.status).toBe(c.status);
      expect(r.body).toMatchObject({ jsonrpc: '2.0', error: { code: c.code, message: expect.any(String) } });
      expect(r.headers.get('x-request-id')).toMatch(/^req_/);
      const rows = await mcpRows(t);
      expect(rows.length - before).toBe(1);
      expect(rows[0]).toMatchObject({ method: 'POST', routePattern: '/mcp', statusCode: c.status });
      expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body.data).toEqual([]);
    });

    it("takes an Mcp-Name in the base64 sentinel form when it decodes to the body's name", async () => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      const r = await post2026(
        t,
        'tools/call',
        { name: 'get_me', arguments: {} },
        { token: w.key, headers: { 'mcp-name': b64('get_me') } },
      );
      expect(r.status).toBe(200);
      expect(r.body.result.structuredContent.id).toBe(w.owner.id);
    });
  });
});
