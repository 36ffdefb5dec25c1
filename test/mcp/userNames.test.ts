import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { startReceiver } from '../webhooks/helpers.js';

const SECRET_NAME = 'Mallory of Othercorp';

/** The v2 SDK client on /mcp with this key. */
async function connectV2(t: TestServer, key: string) {
  const client = new ClientV2({ name: 'names-test', version: '1' });
  await client.connect(
    new TransportV2(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

const textOf = (r: { content?: unknown }) => (r.content as { type: string; text: string }[])[0].text;

describe('MCP result texts name only users the caller can see', () => {
  it("never rewrites a free-form field: an agent run's output is no oracle from user id to name", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Othercorp');
    await sql(t.rt.services.ds, 'UPDATE "users" SET "name" = ? WHERE "id" = ?', [SECRET_NAME, other.owner.id]);
    // the connector (whoever controls it) writes user ids of its choosing into the run's output
    const output = { reviewerId: other.owner.id, nested: [{ assigneeId: other.owner.id }], memberId: w.member.id };
    await using rx = await startReceiver([{ status: 200, body: JSON.stringify({ status: 'succeeded', output }) }]);
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, connector.id)).body as { id: string };
    await invokeDue(t.rt);

    await using c = await connectV2(t, key);
    const got = await c.callTool({ name: 'get_agent_run', arguments: { roomId: w.roomId, runId: run.id } });
    expect(got.structuredContent).toMatchObject({ status: 'succeeded', output });
    const text = textOf(got);
    expect(text).not.toContain(SECRET_NAME);
    // the output as the connector wrote it, ids and keys unchanged; the declared field is named
    expect(JSON.parse(text)).toMatchObject({ output, delegatingUser: `owner (${w.owner.id})` });

    const page = await c.callTool({ name: 'list_agent_runs', arguments: { roomId: w.roomId } });
    expect(textOf(page)).not.toContain(SECRET_NAME);
    expect(textOf(page)).toContain(other.owner.id);
  });

  it('leaves the id of a user of another organization unnamed, even in a declared field', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Othercorp');
    await sql(t.rt.services.ds, 'UPDATE "users" SET "name" = ? WHERE "id" = ?', [SECRET_NAME, other.owner.id]);
    const task = (
      await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, {
        key: w.key,
        body: { title: 'Review', assigneeId: w.member.id },
      })
    ).body as { id: string };
    expect(task.id).toBeTruthy();
    const task2 = (await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key: w.key, body: { title: 'Other' } }))
      .body as { id: string };
    // a row naming someone the caller cannot see (a user gone to another organization, say)
    await sql(t.rt.services.ds, 'UPDATE "tasks" SET "assigneeId" = ? WHERE "id" = ?', [other.owner.id, task2.id]);

    await using c = await connectV2(t, w.key);
    const text = textOf(await c.callTool({ name: 'list_tasks', arguments: { roomId: w.roomId } }));
    expect(text).not.toContain(SECRET_NAME);
    expect(text).toContain(other.owner.id);
    // a user the caller can see is still named, once, in the legend
    expect(text).toContain(`member=${w.member.id}`);
    const one = textOf(await c.callTool({ name: 'get_task', arguments: { roomId: w.roomId, taskId: task2.id } }));
    expect(one).not.toContain(SECRET_NAME);
    expect(one).toContain(other.owner.id);
  });
});
