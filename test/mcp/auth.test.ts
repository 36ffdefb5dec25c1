import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { connectMcp, postMcp, toolCall } from './mcpClient.js';

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('MCP authentication at the HTTP level', () => {
  it('answers 401 with the protected-resource metadata, and audits it', async () => {
    await using t = await startTestServer();
    const metadata = `${t.baseUrl}/.well-known/oauth-protected-resource/mcp`;
    const none = await postMcp(t, listTools);
    expect(none.status).toBe(401);
    // (the challenge also names the scope a client asks for to start)
    expect(none.headers.get('www-authenticate')).toMatch(
      new RegExp(`^Bearer resource_metadata="${metadata}", scope="mcp:tools [a-z: ]+"$`),
    );
    expect(none.body.error).toMatchObject({ code: 'unauthorized', requestId: none.headers.get('x-request-id') });
    const bad = await postMcp(t, listTools, { token: 'svc_live_not-a-real-key' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(
      new RegExp(`^Bearer resource_metadata="${metadata}", scope="mcp:tools [a-z: ]+", error="invalid_token"`),
    );
    const get = await t.fetch('/mcp', { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(401);

    const rows = (await listAudit(t.rt.services, {})).filter((a) => a.surface === 'mcp');
    expect(rows.map((a) => [a.method, a.routePattern, a.statusCode, a.errorCode, a.actor])).toEqual([
      ['GET', '/mcp', 401, 'unauthorized', null],
      ['POST', '/mcp', 401, 'unauthorized', null],
      ['POST', '/mcp', 401, 'unauthorized', null],
    ]);
    await expect(connectMcp(t)).rejects.toThrow();
  });

  it('accepts X-Api-Key, and refuses a key without mcp:tools with the scope challenge', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const viaHeader = await postMcp(t, listTools, { headers: { 'x-api-key': w.key } });
    expect(viaHeader.status).toBe(200);
    const restOnly = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    const r = await postMcp(t, listTools, { token: restOnly.token });
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/mcp", error_description="Missing scope: mcp:tools"`,
    );
    expect(r.body.error).toMatchObject({
      code: 'insufficient_scope',
      details: { required: ['mcp:tools'], granted: ['me:read'] },
    });
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({
      surface: 'mcp',
      statusCode: 403,
      errorCode: 'insufficient_scope',
      actor: 'app',
      apiKeyId: restOnly.id,
    });
  });

  it('answers a tool call whose scope is missing with the MCP scope challenge (HTTP 403), audited', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const narrow = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'me:read'],
    });
    const r = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'hi' }), { token: narrow.token });
    expect(r.status).toBe(403);
    const challenge = r.headers.get('www-authenticate')!;
    expect(challenge).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:tools messages:write", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    expect(r.body.error).toMatchObject({
      code: 'insufficient_scope',
      requestId: r.headers.get('x-request-id'),
      details: { required: ['mcp:tools', 'messages:write'], granted: ['mcp:tools', 'me:read'] },
    });
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({
      surface: 'mcp',
      method: 'TOOL',
      routePattern: 'create_message',
      statusCode: 403,
      errorCode: 'insufficient_scope',
      actor: 'app',
      apiKeyId: narrow.id,
      requestId: r.headers.get('x-request-id'),
      units: 0,
    });
    // nothing was written
    const list = await postMcp(t, toolCall('list_messages', { roomId: w.roomId }), { token: w.key });
    expect(list.body.result.structuredContent.data).toEqual([]);

    // the SDK client sees the 403 (with an OAuth provider it would ask for the scopes named in the challenge)
    await using c = await connectMcp(t, { token: narrow.token });
    const err = await c
      .callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'hi' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(403);
    expect((await c.callTool({ name: 'get_me', arguments: {} })).isError).toBeFalsy();
  });

  it('refuses GET and DELETE: stateless, no stream and no session', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const method of ['GET', 'DELETE']) {
      const r = await t.fetch('/mcp', {
        method,
        headers: { authorization: `Bearer ${w.key}`, accept: 'text/event-stream' },
      });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      expect(await r.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    const rows = (await listAudit(t.rt.services, {})).filter((a) => a.surface === 'mcp');
    expect(rows.map((a) => [a.method, a.statusCode])).toEqual([['DELETE', 405]]);
    const below = await t.fetch('/mcp/elsewhere', { method: 'POST', headers: { authorization: `Bearer ${w.key}` } });
    expect(below.status).toBe(404);
    expect(await below.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('refuses malformed bodies with JSON-RPC errors, audited, never a 500', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const notJson = await postMcp(t, '{nope', { token: w.key });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe(-32700);
    const notRpc = await postMcp(t, { hello: 'world' }, { token: w.key });
    expect(notRpc.status).toBe(400);
    const wrongType = await postMcp(t, 'x', { token: w.key, headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(415);
    const noAccept = await postMcp(t, listTools, { token: w.key, headers: { accept: 'application/json' } });
    expect(noAccept.status).toBe(406);
    const rows = (await listAudit(t.rt.services, {})).filter((a) => a.surface === 'mcp');
    expect(rows.map((a) => a.statusCode).sort()).toEqual([400, 400, 406, 415]);
  });
});
