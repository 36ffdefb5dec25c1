import { Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { connectionRights, METHOD_RULES, serveMethods } from '../../mcp/server/connectionRights.js';
import { buildToolCatalog } from '../../mcp/tools/toolCatalog.js';
import { authenticate } from '../../src/auth/authenticate.js';
import { createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { addConnector, getRun, INVOKER_SCOPES, invokerKey } from '../agents/helpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { ENVELOPE_2026, post2026, postMcp } from './mcpClient.js';
import { personToken } from './personToken.js';

type World = Awaited<ReturnType<typeof createWorld>>;
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** A run started as a task by `token` (a 2026-07-28 client declaring the tasks extension): its task id. */
async function startTask(t: TestServer, token: string, w: World, connectorId: string): Promise<string> {
  const r = await post2026(
    t,
    'tools/call',
    {
      name: 'create_agent_run',
      arguments: { roomId: w.roomId, connectorId, input: { text: 'one' } },
      _meta: { [CAPS]: TASKS },
    },
    { token },
  );
  expect(r.body.result).toMatchObject({ resultType: 'task' });
  return r.body.result.taskId;
}

/** A task method on 2026-07-28, on `/mcp` + `query`, with these client capabilities and headers. */
const taskCall = (
  t: TestServer,
  token: string,
  method: string,
  taskId: string,
  o: { caps?: Record<string, unknown>; query?: string; headers?: Record<string, string> } = {},
) =>
  postMcp(
    t,
    {
      jsonrpc: '2.0',
      id: 7,
      method,
      params: { taskId, _meta: { ...ENVELOPE_2026, [CAPS]: o.caps ?? TASKS } },
    },
    {
      token,
      path: `/mcp${o.query ?? ''}`,
      headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': taskId, ...o.headers },
    },
  );

const runStatus = async (t: TestServer, key: string, taskId: string) => {
  const [roomId, runId] = taskId.split('.');
  return (await getRun(t, key, roomId, runId)).body.status;
};

describe('MCP task methods pass the rules of the tool they stand for', () => {
  it('tasks/cancel on a read-only connection, or outside the agents toolset, cancels nothing', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const taskId = await startTask(t, key, w, connector.id);

    for (const o of [
      { query: '?readonly=true' },
      { headers: { 'x-mcp-readonly': 'true' } },
      { query: '?toolsets=me' },
      { query: '?toolsets=rooms,messages' },
    ]) {
      const r = await taskCall(t, key, 'tasks/cancel', taskId, o);
      expect(r.body.error, JSON.stringify(o)).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^tasks\/cancel calls cancel_agent_run: Unknown tool: cancel_agent_run/),
      });
      expect(await runStatus(t, key, taskId)).toBe('queued');
    }
    // tasks/get reads: a read-only connection may, a connection without the agents toolset may not
    expect((await taskCall(t, key, 'tasks/get', taskId, { query: '?readonly=true' })).body.result).toMatchObject({
      taskId,
      status: 'working',
    });
    expect((await taskCall(t, key, 'tasks/get', taskId, { query: '?toolsets=me' })).body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^tasks\/get calls get_agent_run: Unknown tool: get_agent_run is in toolset agents/,
      ),
    });
    // the same connection with the agents toolset and read-write cancels it
    expect((await taskCall(t, key, 'tasks/cancel', taskId, { query: '?toolsets=agents' })).body.result).toMatchObject({
      resultType: 'complete',
    });
    expect(await runStatus(t, key, taskId)).toBe('canceled');
  });

  it("a person's token with elicitation is not cancelled without the confirmation cancel_agent_run asks", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const { token } = await personToken(t, w, INVOKER_SCOPES);
    const key = await invokerKey(t.rt, w);
    const taskId = await startTask(t, token, w, connector.id);
    const [roomId, runId] = taskId.split('.');

    const refused = await taskCall(t, token, 'tasks/cancel', taskId, { caps: { ...TASKS, elicitation: {} } });
    expect(refused.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('call the tool cancel_agent_run'),
      data: { tool: 'cancel_agent_run', arguments: { roomId, runId } },
    });
    expect(await runStatus(t, key, taskId)).toBe('queued');

    // the tool asks the person, as it always did
    const asked = await post2026(
      t,
      'tools/call',
      { name: 'cancel_agent_run', arguments: { roomId, runId }, _meta: { [CAPS]: { elicitation: {} } } },
      { token },
    );
    expect(asked.body.result).toMatchObject({ resultType: 'input_required' });
    // a client without elicitation is never asked (automation does not wait for a person): it cancels
    expect((await taskCall(t, token, 'tasks/cancel', taskId)).body.result).toMatchObject({ resultType: 'complete' });
    expect(await runStatus(t, key, taskId)).toBe('canceled');
  });
});

describe('MCP task methods from a client that did not declare the tasks extension', () => {
  it('are refused with -32021 (HTTP 400) naming the extension, before anything runs', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const taskId = await startTask(t, key, w, connector.id);

    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      for (const caps of [{}, { extensions: {} }, { elicitation: {} }]) {
        const r = await taskCall(t, key, method, taskId, { caps });
        expect(r.status, method).toBe(400);
        expect(r.body, method).toMatchObject({
          id: 7,
          error: { code: -32021, data: { requiredCapabilities: TASKS } },
        });
      }
    }
    expect(await runStatus(t, key, taskId)).toBe('queued');
    // a 2025 client declares nothing per request, and never gets a task: the same refusal
    const legacy = await postMcp(
      t,
      { jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: { taskId } },
      { token: key },
    );
    expect(legacy.body.error).toMatchObject({ code: -32021 });
    expect(await runStatus(t, key, taskId)).toBe('queued');
    // declared: tasks/update of one of its tasks is refused as having nothing to update
    expect((await taskCall(t, key, 'tasks/update', taskId)).body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/asks for no input/),
    });
  });
});

describe('one place decides what a connection may call', () => {
  it('refuses to register a handler for a method without a rule, and admits every request by its rule', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const rights = connectionRights({
      services: t.rt.services,
      catalog: buildToolCatalog(),
      selection: { toolsets: null, readOnly: true },
      actor: await authenticate(t.rt.services, { authorization: `Bearer ${w.key}` }),
    });
    const serve = serveMethods(new Server({ name: 'x', version: '1' }, { capabilities: { tools: {} } }), rights);
    expect(() => (serve as (...a: unknown[]) => unknown)('tasks/list', async () => ({}))).toThrow(
      /tasks\/list has no rule in METHOD_RULES/,
    );
    expect(Object.keys(METHOD_RULES)).toEqual(
      expect.arrayContaining([
        'tools/call',
        'tasks/get',
        'tasks/cancel',
        'completion/complete',
        'subscriptions/listen',
      ]),
    );
    // a read-only connection: a write tool is refused by the rule of tools/call, a read admitted
    await expect(rights.admit('tools/call', { name: 'create_message' }, {})).rejects.toThrow(/read-only/);
    await expect(rights.admit('tools/call', { name: 'list_messages' }, {})).resolves.toBeUndefined();
    await expect(rights.admit('tasks/cancel', { taskId: 'x' }, TASKS)).rejects.toThrow(/read-only/);
    await expect(rights.admit('resources/read', { uri: 'svc://rooms/x' }, {})).resolves.toBeUndefined();
  });
});
