import { createMCPClient } from '@ai-sdk/mcp';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { bodyOf, connectMcp } from './mcpClient.js';

/** The v2 SDK's client over Streamable HTTP with an API key, negotiating as `versionNegotiation` says. */
async function connectV2(t: TestServer, key: string, mode?: 'auto' | 'legacy') {
  const client = new ClientV2(
    { name: 'svc-test-v2', version: '1.0.0' },
    mode ? { versionNegotiation: { mode } } : undefined,
  );
  await client.connect(
    new TransportV2(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** How many times the client sent each MCP method, from its audit rows' and the server's point of view. */
const toolRows = async (t: TestServer, tool: string) =>
  (await listAudit(t.rt.services, { limit: 100 })).filter((r) => r.surface === 'mcp' && r.routePattern === tool);

describe('the MCP clients people use, with an API key', () => {
  it('the v2 SDK client speaks 2026-07-28 when asked to negotiate, 2025-11-25 by default', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    {
      await using c = await connectV2(t, w.key, 'auto');
      expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(c.getServerVersion()).toMatchObject({ name: 'svc' });
      expect(c.getInstructions()).toContain('rooms');
      const tools = (await c.listTools()).tools.map((x) => x.name);
      expect(tools).toContain('get_me');
      const me = await c.callTool({ name: 'get_me', arguments: {} });
      expect(me.structuredContent).toMatchObject({ id: w.owner.id });
      const created = await c.callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'from v2' } });
      expect(created.isError).toBeFalsy();
    }
    {
      await using c = await connectV2(t, w.key);
      expect(c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect((await c.callTool({ name: 'get_me', arguments: {} })).structuredContent).toMatchObject({ id: w.owner.id });
    }
    expect(await toolRows(t, 'get_me')).toHaveLength(2);
    expect(await toolRows(t, 'create_message')).toHaveLength(1);
  });

  it('the v1 SDK client (1.x) speaks 2025-11-25', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    expect(c.getServerVersion()).toMatchObject({ name: 'svc' });
    expect((await c.listTools()).tools.map((x) => x.name)).toContain('get_me');
    expect(bodyOf(await c.callTool({ name: 'get_me', arguments: {} })).id).toBe(w.owner.id);
    expect(await toolRows(t, 'get_me')).toHaveLength(1);
  });

  it("the Vercel AI SDK's MCP client (@ai-sdk/mcp) lists the tools and calls one, on 2026-07-28 (its default) and with initialize", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const protocolVersionDiscovery of [true, false]) {
      const client = await createMCPClient({
        transport: { type: 'http', url: `${t.baseUrl}/mcp`, headers: { Authorization: `Bearer ${w.key}` } },
        protocolVersionDiscovery,
      });
      try {
        expect(client.serverInfo).toMatchObject({ name: 'svc' });
        const tools = await client.tools();
        expect(Object.keys(tools)).toContain('get_me');
        const me = await client.callTool({ name: 'get_me', arguments: {} });
        expect(me.isError).toBeFalsy();
        expect(me.structuredContent).toMatchObject({ id: w.owner.id });
        // a 2026-07-28 result names the server in its _meta; a 2025 one does not
        expect(me._meta?.['io.modelcontextprotocol/serverInfo'] !== undefined).toBe(protocolVersionDiscovery);
      } finally {
        await client.close();
      }
    }
    expect(await toolRows(t, 'get_me')).toHaveLength(2);
  });
});
