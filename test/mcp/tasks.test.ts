import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { addConnector, getRun, INVOKER_SCOPES, invokeDue, invokerKey } from '../agents/helpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { post2026 } from './mcpClient.js';

const TASKS = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } };

const startRunTool = (
  t: TestServer,
  key: string,
  roomId: string,
  connectorId: string,
  caps: Record<string, unknown> = TASKS,
) =>
  post2026(
    t,
    'tools/call',
    { name: 'create_agent_run', arguments: { roomId, connectorId, input: { text: 'one' } }, _meta: caps },
    { token: key },
  );
/**
 * A tasks/get or tasks/cancel on 2026-07-28: the task id is the request's `Mcp-Name` (the SDK checks it against the
 * body).
 */
const taskCall = (t: TestServer, key: string, method: 'tasks/get' | 'tasks/cancel', taskId: unknown) =>
  post2026(t, method, { taskId, _meta: TASKS }, { token: key, headers: { 'mcp-name': String(taskId) } });

describe('MCP tasks extension: an agent run started over MCP is a task', () => {
  it('answers a task handle, tasks/get follows the run to its result', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([
      { status: 200, body: JSON.stringify({ status: 'succeeded', output: { said: 'done' } }) },
    ]);
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);

    const discover = await post2026(t, 'server/discover', {}, { token: key });
    expect(discover.body.result.capabilities.extensions).toMatchObject({ 'io.modelcontextprotocol/tasks': {} });

    const started = await startRunTool(t, key, w.roomId, connector.id);
    expect(started.status).toBe(200);
    expect(started.body.result).toMatchObject({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      pollIntervalMs: 2000,
      createdAt: expect.any(String),
    });
    const { taskId } = started.body.result;

    const working = await taskCall(t, key, 'tasks/get', taskId);
    expect(working.body.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    await invokeDue(t.rt);
    const done = await taskCall(t, key, 'tasks/get', taskId);
    expect(done.body.result).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'completed',
      result: { structuredContent: { status: 'succeeded', output: { said: 'done' } } },
    });
  });

  it("tasks/cancel cancels the run; a client without the extension gets today's result", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const { taskId } = (await startRunTool(t, key, w.roomId, connector.id)).body.result;
    const cancelled = await taskCall(t, key, 'tasks/cancel', taskId);
    expect(cancelled.body.result).toMatchObject({ resultType: 'complete' });
    expect((await taskCall(t, key, 'tasks/get', taskId)).body.result).toMatchObject({ status: 'cancelled' });
    // cancelling again is acknowledged (cooperative)
    expect((await taskCall(t, key, 'tasks/cancel', taskId)).body.result).toBeDefined();

    const plain = await startRunTool(t, key, w.roomId, connector.id, {
      'io.modelcontextprotocol/clientCapabilities': {},
    });
    expect(plain.body.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'queued' } });
  });

  it('a task id of another credential, a forged or malformed one: -32602 unknown task, nothing cancelled', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const sameOwnerOtherKey = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES })
    ).token;
    const started = (await startRunTool(t, key, w.roomId, connector.id)).body.result;
    const { taskId } = started;
    const [roomId, runId] = (taskId as string).split('.');

    for (const [who, id] of [
      [sameOwnerOtherKey, taskId],
      [key, `${roomId}.${runId}.${'0'.repeat(32)}`],
      [key, 'nonsense'],
      [key, `${taskId}.x`],
      [key, 'x'.repeat(301)],
      [key, 42],
    ] as const) {
      for (const method of ['tasks/get', 'tasks/cancel'] as const) {
        const r = await taskCall(t, who, method, id);
        expect(r.status).toBe(200);
        // a task id that is not a string fails the params schema before svc reads it: -32602 as well
        expect(r.body.error.code).toBe(-32602);
        expect(JSON.stringify(r.body)).not.toContain('queued');
      }
    }
    expect((await taskCall(t, sameOwnerOtherKey, 'tasks/get', taskId)).body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Unknown task/),
    });
    expect((await getRun(t, key, roomId, runId)).body.status).toBe('queued');
  });

  it('the v2 SDK client (which does not declare the extension) gets the queued run as before', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const client = new ClientV2({ name: 'svc-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new TransportV2(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    );
    try {
      expect(client.getServerCapabilities()?.extensions).toMatchObject({ 'io.modelcontextprotocol/tasks': {} });
      const r = await client.callTool({
        name: 'create_agent_run',
        arguments: { roomId: w.roomId, connectorId: connector.id, input: { text: 'one' } },
      });
      expect(r.structuredContent).toMatchObject({ status: 'queued', roomId: w.roomId });
    } finally {
      await client.close();
    }
  });
});
