import { describe, expect, it } from 'vitest';
import { createRoom } from '../../src/domain/rooms.js';
import { sql } from '../../db/sql.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { startReceiver } from '../webhooks/helpers.js';
import { addConnector, auditRowsOfRun, getRun, invokeDue, invokerKey, startRun } from './helpers.js';

/** A tool call with a delegated token: the tool's structured result, or the error code (tool error or HTTP refusal). */
async function tool(
  t: TestServer,
  token: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ok: boolean; code?: string; status: number; data?: any }> {
  const r = await postMcp(t, toolCall(name, args), { token });
  if (r.status === 403 && /insufficient_scope/.test(r.headers.get('www-authenticate') ?? ''))
    return { ok: false, status: 403, code: 'insufficient_scope' };
  if (r.status !== 200) return { ok: false, status: r.status, code: `http_${r.status}` };
  const result = r.body?.result;
  if (!result) return { ok: false, status: r.status, code: r.body?.error ? 'jsonrpc_error' : 'unreadable' };
  if (result.isError) {
    const env = result.structuredContent ?? JSON.parse(result.content?.[0]?.text ?? '{}');
    return { ok: false, status: 200, code: env.error?.code };
  }
  return { ok: true, status: 200, data: result.structuredContent };
}

/** A connector that accepts every invocation (202) and keeps it, so the test holds the delegated token. */
async function acceptingConnector(t: TestServer, orgId: string, scopes?: string[]) {
  const rx = await startReceiver();
  rx.script.push(...Array.from({ length: 20 }, () => ({ status: 202 })));
  const c = await addConnector(t.rt, orgId, rx.url, scopes);
  const tokenOf = (i = rx.requests.length - 1) =>
    JSON.parse(rx.requests[i].body.toString('utf8')).delegation.accessToken as string;
  return { rx, c, tokenOf };
}

describe('agent runs: the delegated token never exceeds its human', () => {
  it('refuses a run without agent:invoke (403 insufficient_scope) on REST and MCP', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    const r = await startRun(t, w.key, w.roomId, c.id);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'insufficient_scope', details: { required: ['agent:invoke'] } });
    const m = await tool(t, w.key, 'create_agent_run', { roomId: w.roomId, connectorId: c.id, input: { text: 'x' } });
    expect(m.ok).toBe(false);
    expect(Number((await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "agent_runs"')).rows[0].n)).toBe(0);
  });

  it("gives the token the invoker's ∩ the connector's scopes, one room, one organization, the MCP audience only", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId, [
      'mcp:tools',
      'messages:write',
      'tasks:write',
      'rooms:read',
      'records:read',
    ]);
    await using _rx = rx;
    // the invoker lacks tasks:write: the token must lack it too, whatever the connector may be delegated
    const key = await invokerKey(t.rt, w, [
      'agent:invoke',
      'mcp:tools',
      'messages:write',
      'messages:read',
      'rooms:read',
      'events:read',
    ]);
    const started = await startRun(t, key, w.roomId, c.id);
    expect(started.status).toBe(202);
    expect(started.body.scopes.sort()).toEqual(['mcp:tools', 'messages:write', 'rooms:read']);
    await invokeDue(t.rt);
    const token = tokenOf();
    const body = JSON.parse(rx.requests[0].body.toString('utf8'));
    expect(body.run).toMatchObject({ id: started.body.id, roomId: w.roomId, delegatingUserId: w.owner.id });
    expect(rx.requests[0].headers['svc-webhook-id']).toBe(started.body.id);
    expect((await getRun(t, key, w.roomId, started.body.id)).body.status).toBe('running');

    // scope
    expect(await tool(t, token, 'create_task', { roomId: w.roomId, title: 'x' })).toMatchObject({
      ok: false,
      code: 'insufficient_scope',
    });
    expect(await tool(t, token, 'create_message', { roomId: w.roomId, body: 'hello from the agent' })).toMatchObject({
      ok: true,
      data: { agentRunId: started.body.id, postedBy: 'agent' },
    });
    expect(
      await tool(t, token, 'create_agent_run', { roomId: w.roomId, connectorId: c.id, input: { text: 'again' } }),
    ).toMatchObject({ ok: false, code: 'insufficient_scope' });
    // room: another room of the same organization, where the human is a member
    const second = await t.rt.services.ds.transaction((m) =>
      createRoom(m, new Date(), { name: 'Second', createdById: w.owner.id, organizationId: w.orgId }),
    );
    expect(await tool(t, token, 'create_message', { roomId: second.id, body: 'x' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    const rooms = await tool(t, token, 'list_rooms', {});
    expect(rooms.data.data.map((r: { id: string }) => r.id)).toEqual([w.roomId]);
    expect(await tool(t, token, 'create_room', { name: 'Escape' })).toMatchObject({ ok: false });
    // a call refused before any procedure runs (a tool that does not exist) is the run's too
    expect(await tool(t, token, 'no_such_tool', {})).toMatchObject({ ok: false, code: 'jsonrpc_error' });
    // organization
    expect(await tool(t, token, 'create_message', { roomId: other.roomId, body: 'x' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    // audience: the token is for /mcp only
    const rest = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: token, body: { body: 'x' } });
    expect(rest.status).toBe(403);
    expect(rest.body.error.code).toBe('invalid_audience');

    // audit: what the agent did (and was refused) is on record as actor=agent, with the human and the run
    const audit = await auditRowsOfRun(t.rt, started.body.id);
    expect(audit.length).toBeGreaterThanOrEqual(6);
    expect(audit.every((a) => a.actor === 'agent' && a.delegatingUserId === w.owner.id)).toBe(true);
    expect(audit.filter((a) => a.routePattern === '(unknown tool)').map((a) => [a.surface, a.statusCode])).toEqual([
      ['mcp', 404],
    ]);

    // the connector completes the run with its token; the token then stops working
    const done = await tool(t, token, 'complete_agent_run', {
      roomId: w.roomId,
      runId: started.body.id,
      status: 'succeeded',
      output: { said: 'hello' },
    });
    expect(done).toMatchObject({ ok: true, data: { status: 'succeeded', output: { said: 'hello' } } });
    expect(done.data.created).toHaveLength(1);
    expect(await tool(t, token, 'create_message', { roomId: w.roomId, body: 'after the end' })).toMatchObject({
      ok: false,
      code: 'http_401',
    });
  });

  it("follows the human: losing the room, then the organization, mid-run takes the agent's access away", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    // the run is the member's (not an org admin): room rights come from membership alone
    const key = await invokerKey(t.rt, w, undefined, w.member.id);
    const started = await startRun(t, key, w.roomId, c.id);
    await invokeDue(t.rt);
    const token = tokenOf();
    expect(await tool(t, token, 'create_message', { roomId: w.roomId, body: 'still allowed' })).toMatchObject({
      ok: true,
    });
    await sql(t.rt.ds, 'DELETE FROM "room_members" WHERE "roomId" = ? AND "userId" = ?', [w.roomId, w.member.id]);
    expect(await tool(t, token, 'create_message', { roomId: w.roomId, body: 'no longer' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    await sql(t.rt.ds, 'DELETE FROM "memberships" WHERE "organizationId" = ? AND "userId" = ?', [w.orgId, w.member.id]);
    expect(await tool(t, token, 'list_rooms', {})).toMatchObject({ ok: false, code: 'http_401' });
    expect(
      Number(
        (
          await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "messages" WHERE "agentRunId" = ?', [
            started.body.id,
          ])
        ).rows[0].n,
      ),
    ).toBe(1);
  });

  it('stops the token when the run is canceled, and only a room member with agent:invoke cancels', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const key = await invokerKey(t.rt, w);
    const started = await startRun(t, key, w.roomId, c.id);
    await invokeDue(t.rt);
    const token = tokenOf();
    expect(await tool(t, token, 'list_rooms', {})).toMatchObject({ ok: true });
    const canceled = await call(t, 'POST', `/v1/rooms/${w.roomId}/agent-runs/${started.body.id}/cancel`, { key });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled' });
    expect(await tool(t, token, 'list_rooms', {})).toMatchObject({ ok: false, code: 'http_401' });
    const again = await call(t, 'POST', `/v1/rooms/${w.roomId}/agent-runs/${started.body.id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');
  });

  it('answers bad input with the error envelope: unknown or foreign connector 404, inactive 409, internal endpoint refused at registration', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const key = await invokerKey(t.rt, w);
    const unknown = await startRun(t, key, w.roomId, 'acn_01KAR3V6X5Q2Z8N4M7P9W1T3YB');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', requestId: expect.any(String) });
    const foreign = await addConnector(t.rt, other.orgId, 'http://127.0.0.1:9/x');
    expect((await startRun(t, key, w.roomId, foreign.id)).status).toBe(404);
    const off = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    await sql(t.rt.ds, 'UPDATE "agent_connectors" SET "active" = ? WHERE "id" = ?', [false, off.id]);
    const inactive = await startRun(t, key, w.roomId, off.id);
    expect(inactive.status).toBe(409);
    expect(inactive.body.error.code).toBe('connector_inactive');
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    expect((await startRun(t, key, w.roomId, c.id, { text: '' })).status).toBe(400);
    expect((await startRun(t, key, w.dmRoomId, c.id)).status).toBe(404);
    const missingRecord = await startRun(t, key, w.roomId, c.id, {
      text: 'x',
      recordId: 'rec_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
    });
    expect(missingRecord.status).toBe(404);
    // (the test server allow-lists 127.0.0.1/32 and ::1/128 only, for its local connectors)
    for (const url of [
      'http://169.254.169.254/latest',
      'https://10.0.0.1/x',
      'http://[fe80::1]:8080/x',
      'http://2130706434/',
      'http://localhost/x',
      'ftp://example.com/x',
    ]) {
      await expect(addConnector(t.rt, w.orgId, url)).rejects.toMatchObject({ code: 'validation_error' });
    }
    expect(
      Number((await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "agent_connectors"')).rows[0].n),
    ).toBe(3);
    expect(Number((await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "agent_runs"')).rows[0].n)).toBe(0);
  });
});
