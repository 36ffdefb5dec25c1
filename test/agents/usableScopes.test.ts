import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { connectMcp } from '../mcp/mcpClient.js';
import { addConnector, INVOKER_SCOPES, invokerKey, startRun } from './helpers.js';

// A run's delegated token works only through /mcp: without mcp:tools on both sides it could call no tool, so the run
// is refused when asked for, not failed later by its connector.
describe('an agent run whose delegated token could call nothing is refused at the start', () => {
  it('REST: a key with agent:invoke but without mcp:tools gets 403 insufficient_scope naming mcp:tools', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const connector = await addConnector(t.rt, w.orgId, 'https://agents.example.com/run');
    const noTools = await invokerKey(
      t.rt,
      w,
      INVOKER_SCOPES.filter((s) => s !== 'mcp:tools'),
    );
    const refused = await startRun(t, noTools, w.roomId, connector.id);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'insufficient_scope',
      message: expect.stringMatching(/^Missing scope: mcp:tools\. .*could call no tool; nothing was started/),
      details: { required: ['mcp:tools'], granted: expect.not.arrayContaining(['mcp:tools']) },
    });
    // only agent:invoke: the run's scopes would have been []
    const bare = await invokerKey(t.rt, w, ['agent:invoke']);
    expect((await startRun(t, bare, w.roomId, connector.id)).body.error.code).toBe('insufficient_scope');

    const full = await invokerKey(t.rt, w);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs`, { key: full })).body.data).toEqual([]);
    const started = await startRun(t, full, w.roomId, connector.id);
    expect(started.status).toBe(202);
    expect(started.body.scopes).toContain('mcp:tools');
  });

  it('MCP: a connector that may not be delegated mcp:tools is refused with a tool error naming it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const connector = await addConnector(t.rt, w.orgId, 'https://agents.example.com/run', ['tasks:read']);
    const key = (await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES })).token;
    await using c = await connectMcp(t, { token: key });
    const r = await c.callTool({
      name: 'create_agent_run',
      arguments: { roomId: w.roomId, connectorId: connector.id, input: { text: 'one' } },
    });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(JSON.parse((r.content as { text: string }[])[0].text).error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/may not be delegated mcp:tools, so its runs could call no tool/),
      details: { connectorId: connector.id, missing: ['mcp:tools'] },
    });
    const reader = (await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES }))
      .token;
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs`, { key: reader })).body.data).toEqual([]);
  });
});
