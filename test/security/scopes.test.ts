import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';

// A scope alone never permits, and a missing one always refuses: 403 insufficient_scope
// with details.required and details.granted, on REST and MCP alike.

describe('security: scopes', () => {
  it('privilege escalation with a read-only key: every write on /v1 gets 403 insufficient_scope with required and granted', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { token } = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['rooms:read', 'messages:read'],
    });
    const attempts: [string, string, unknown, string][] = [
      ['POST', '/v1/rooms', { name: 'x' }, 'rooms:write'],
      ['PATCH', `/v1/rooms/${w.roomId}`, { name: 'x' }, 'rooms:write'],
      ['POST', `/v1/rooms/${w.roomId}/messages`, { body: 'x' }, 'messages:write'],
      ['POST', `/v1/rooms/${w.roomId}/records`, { title: 'x' }, 'records:write'],
      ['GET', `/v1/rooms/${w.roomId}/webhooks`, undefined, 'webhooks:read'],
      ['GET', '/v1/events', undefined, 'events:read'],
      ['GET', '/v1/me', undefined, 'me:read'],
    ];
    for (const [method, path, body, required] of attempts) {
      const r = await call(t, method, path, { key: token, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error).toMatchObject({
        code: 'insufficient_scope',
        details: { required: [required], granted: ['rooms:read', 'messages:read'] },
      });
    }
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body.data).toEqual([]);
  });

  it('MCP without mcp:tools: the whole surface is refused with the scope challenge, whatever the key may do on /v1', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { token } = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['me:read', 'messages:write'],
    });
    const r = await postMcp(t, toolCall('get_me'), { token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('insufficient_scope');
    expect(r.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="mcp:tools"/);
  });

  it("MCP tool call beyond the key's scopes: 403 insufficient_scope naming mcp:tools and the operation scope; tools/list hides the tool", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { token } = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'messages:read'],
    });
    const r = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'x' }), { token });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: 'insufficient_scope',
      details: { required: ['mcp:tools', 'messages:write'] },
    });
    expect(r.headers.get('www-authenticate')).toMatch(/scope="mcp:tools messages:write"/);
    const list = await postMcp(t, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token });
    const names = list.body.result.tools.map((x: { name: string }) => x.name);
    expect(names).toContain('list_messages');
    expect(names).not.toContain('create_message');
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body.data).toEqual([]);
  });

  it('scope smuggling inside a batch: one call without its scope refuses the whole POST', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { token } = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'me:read'],
    });
    const r = await postMcp(
      t,
      [toolCall('get_me', {}, 1), toolCall('create_message', { roomId: w.roomId, body: 'smuggled' }, 2)],
      {
        token,
        headers: { 'mcp-protocol-version': '2025-03-26' },
      },
    );
    expect(r.status).toBe(403);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body.data).toEqual([]);
  });
});
