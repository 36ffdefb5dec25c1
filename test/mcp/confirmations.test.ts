import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { ALL_SCOPES, call, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { post2026, postMcp, toolCall } from './mcpClient.js';
import { personToken as personTokenOf } from './personToken.js';
import { addConnector, INVOKER_SCOPES, invokerKey, startRun } from '../agents/helpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';

type World = Awaited<ReturnType<typeof createWorld>>;

/** A person's OAuth access token for /mcp (what a desktop client holds after consent). */
const personToken = async (t: TestServer, w: World, scopes: string[] = ALL_SCOPES): Promise<string> =>
  (await personTokenOf(t, w, scopes)).token;

const ELICITATION = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const ACCEPT = { confirm: { action: 'accept', content: { confirm: true } } };

/** A 2026-07-28 tools/call from a client declaring elicitation, with the retry's fields when given. */
const callTool = (
  t: TestServer,
  token: string,
  name: string,
  args: Record<string, unknown>,
  retry: Record<string, unknown> = {},
  caps: Record<string, unknown> = ELICITATION,
) => post2026(t, 'tools/call', { name, arguments: args, ...retry, _meta: caps }, { token });

const auditOf = async (t: TestServer, tool: string) =>
  (await listAudit(t.rt.services, { limit: 200 })).filter((a) => a.routePattern === tool);

async function newRecord(t: TestServer, w: World, title = 'Minutes of Monday') {
  return (await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title, body: 'x' } })).body as {
    id: string;
  };
}
const recordStatus = async (t: TestServer, w: World, id: string) =>
  (await call(t, 'GET', `/v1/rooms/${w.roomId}/records/${id}`, { key: w.key })).status;

describe('MCP: a person confirms a destructive tool before it runs (2026-07-28 input_required)', () => {
  it("asks with the target's name and state, runs once on acceptance, refuses the replay", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const token = await personToken(t, w);
    const rec = await newRecord(t, w);
    const args = { roomId: w.roomId, recordId: rec.id };

    const asked = await callTool(t, token, 'delete_record', args);
    expect(asked.status).toBe(200);
    expect(asked.body.result).toMatchObject({
      resultType: 'input_required',
      requestState: expect.any(String),
      inputRequests: {
        confirm: {
          method: 'elicitation/create',
          params: { mode: 'form', requestedSchema: { properties: { confirm: { type: 'boolean' } } } },
        },
      },
    });
    expect(asked.body.result.inputRequests.confirm.params.message).toMatch(
      /delete_record will change the record "Minutes of Monday" \(approval: none/,
    );
    // nothing ran: the record is there, no audit row of the tool, no units
    expect(await recordStatus(t, w, rec.id)).toBe(200);
    expect(await auditOf(t, 'delete_record')).toHaveLength(0);

    const { requestState } = asked.body.result;
    const done = await callTool(t, token, 'delete_record', args, { requestState, inputResponses: ACCEPT });
    expect(done.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { id: rec.id, deleted: true },
    });
    expect(done.body.result.isError).toBeFalsy();
    expect(done.headers.get('svc-api-units-cost')).toBe('2');
    expect(await recordStatus(t, w, rec.id)).toBe(404);
    expect(await auditOf(t, 'delete_record')).toHaveLength(1);

    // the same state and acceptance again: the target is gone, a clear conflict, nothing run
    const replay = await callTool(t, token, 'delete_record', args, { requestState, inputResponses: ACCEPT });
    expect(replay.body.result).toMatchObject({ isError: true });
    expect(JSON.parse(replay.body.result.content[0].text).error).toMatchObject({ code: 'conflict' });
    expect(await auditOf(t, 'delete_record')).toHaveLength(1);
  });

  it('a decline, a missing answer, a changed target: nothing written', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const token = await personToken(t, w);
    const rec = await newRecord(t, w);
    const args = { roomId: w.roomId, recordId: rec.id };
    const { requestState } = (await callTool(t, token, 'delete_record', args)).body.result;

    const declined = await callTool(t, token, 'delete_record', args, {
      requestState,
      inputResponses: { confirm: { action: 'decline' } },
    });
    // a tool error (no structuredContent a client would hold to the outputSchema), in the envelope of every error
    expect(declined.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(declined.body.result.structuredContent).toBeUndefined();
    expect(JSON.parse(declined.body.result.content[0].text).error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/^Not confirmed: .*delete_record \(decline\); nothing was changed/),
      details: { confirmed: false, action: 'decline' },
    });
    const unchecked = await callTool(t, token, 'delete_record', args, {
      requestState,
      inputResponses: { confirm: { action: 'accept', content: { confirm: false } } },
    });
    expect(unchecked.body.result).toMatchObject({ isError: true });
    expect(JSON.parse(unchecked.body.result.content[0].text).error.details).toEqual({
      confirmed: false,
      action: 'accept',
    });
    // no answer at all: asked again
    const again = await callTool(t, token, 'delete_record', args, { requestState });
    expect(again.body.result).toMatchObject({ resultType: 'input_required' });
    expect(await recordStatus(t, w, rec.id)).toBe(200);

    // the record changes between the form and the acceptance: conflict
    await call(t, 'PATCH', `/v1/rooms/${w.roomId}/records/${rec.id}`, { key: w.key, body: { title: 'Renamed' } });
    const changed = await callTool(t, token, 'delete_record', args, { requestState, inputResponses: ACCEPT });
    expect(JSON.parse(changed.body.result.content[0].text).error).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/nothing was changed/),
    });
    expect(await recordStatus(t, w, rec.id)).toBe(200);
    expect(await auditOf(t, 'delete_record')).toHaveLength(0);
  });

  it('refuses a forged state, a state of another credential and an acceptance for another target', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const token = await personToken(t, w);
    const other = await personToken(t, w); // the same person, another credential
    const a = await newRecord(t, w, 'A');
    const b = await newRecord(t, w, 'B');
    const argsA = { roomId: w.roomId, recordId: a.id };
    const { requestState } = (await callTool(t, token, 'delete_record', argsA)).body.result as { requestState: string };

    // one character of the signature changed (the one before the last, whose six bits all count), never to itself
    const at = requestState.length - 2;
    const flip = requestState.slice(0, at) + (requestState[at] === 'A' ? 'B' : 'A') + requestState.slice(at + 1);
    expect(flip).not.toBe(requestState);
    for (const forged of [flip, 'v1.e30.AAAA', 'not a state', requestState + 'x']) {
      const r = await callTool(t, token, 'delete_record', argsA, { requestState: forged, inputResponses: ACCEPT });
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    }
    const stolen = await callTool(t, other, 'delete_record', argsA, { requestState, inputResponses: ACCEPT });
    expect(stolen.body.error).toMatchObject({ code: -32602 });
    const elsewhere = await callTool(
      t,
      token,
      'delete_record',
      { roomId: w.roomId, recordId: b.id },
      { requestState, inputResponses: ACCEPT },
    );
    expect(JSON.parse(elsewhere.body.result.content[0].text).error).toMatchObject({
      code: 'validation_error',
      message: expect.stringMatching(/another call/),
    });
    // a state of a non-destructive tool's call is never asked for; a state on another tool is refused the same way
    const onApprove = await callTool(t, token, 'approve_record', argsA, { requestState, inputResponses: ACCEPT });
    expect(JSON.parse(onApprove.body.result.content[0].text).error).toMatchObject({ code: 'validation_error' });
    expect(await recordStatus(t, w, a.id)).toBe(200);
    expect(await recordStatus(t, w, b.id)).toBe(200);
    expect(await auditOf(t, 'delete_record')).toHaveLength(0);
  });

  it('never asks an API key, a client without elicitation, a 2025 client or REST', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const token = await personToken(t, w);
    const deleted = (r: Awaited<ReturnType<typeof postMcp>>) =>
      expect(r.body.result).toMatchObject({ structuredContent: { deleted: true } });
    deleted(await callTool(t, w.key, 'delete_record', { roomId: w.roomId, recordId: (await newRecord(t, w)).id }));
    deleted(
      await callTool(
        t,
        token,
        'delete_record',
        { roomId: w.roomId, recordId: (await newRecord(t, w)).id },
        {},
        { 'io.modelcontextprotocol/clientCapabilities': {} },
      ),
    );
    deleted(
      await postMcp(t, toolCall('delete_record', { roomId: w.roomId, recordId: (await newRecord(t, w)).id }), {
        token,
      }),
    );
    const rest = await call(t, 'DELETE', `/v1/rooms/${w.roomId}/records/${(await newRecord(t, w)).id}`, { key: w.key });
    expect(rest.status).toBe(200);
  });

  it("shows an approval's pending state before approve_record", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const rec = await newRecord(t, w);
    // the member requests, the owner (through a person's token) approves
    const memberKey = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    expect(
      (
        await call(t, 'POST', `/v1/rooms/${w.roomId}/records/${rec.id}/approval/request`, {
          key: memberKey.token,
          body: {},
        })
      ).status,
    ).toBe(200);
    const token = await personToken(t, w);
    const args = { roomId: w.roomId, recordId: rec.id, comment: 'fine' };
    const asked = await callTool(t, token, 'approve_record', args);
    expect(asked.body.result.inputRequests.confirm.params.message).toMatch(
      /approve_record will change the record "Minutes of Monday" \(approval: pending/,
    );
    const done = await callTool(t, token, 'approve_record', args, {
      requestState: asked.body.result.requestState,
      inputResponses: ACCEPT,
    });
    expect(done.body.result.isError).toBeFalsy();
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/records/${rec.id}`, { key: w.key })).body.approvalState).toBe(
      'approved',
    );
  });

  it('the v2 SDK client with an elicitation handler: asked, answered, retried for it, one write', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const token = await personToken(t, w);
    const kept = await newRecord(t, w, 'Keep me');
    const gone = await newRecord(t, w, 'Delete me');
    const client = new ClientV2(
      { name: 'svc-test-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = (request.params as { message: string }).message;
      asked.push(message);
      return message.includes('Keep me') ? { action: 'decline' } : { action: 'accept', content: { confirm: true } };
    });
    await client.connect(
      new TransportV2(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      // listed first, as a host does: the client then holds every result's structuredContent to the outputSchema
      const listed = await client.listTools();
      expect(listed.tools.find((x) => x.name === 'delete_record')?.outputSchema).toBeDefined();
      const declined = await client.callTool({
        name: 'delete_record',
        arguments: { roomId: w.roomId, recordId: kept.id },
      });
      expect(declined.isError).toBe(true);
      expect(declined.structuredContent).toBeUndefined();
      const text = (declined.content as { type: string; text: string }[])[0].text;
      expect(JSON.parse(text).error).toMatchObject({ code: 'forbidden', details: { confirmed: false } });
      const deleted = await client.callTool({
        name: 'delete_record',
        arguments: { roomId: w.roomId, recordId: gone.id },
      });
      expect(deleted.structuredContent).toMatchObject({ id: gone.id, deleted: true });
    } finally {
      await client.close();
    }
    expect(asked).toEqual([expect.stringContaining('"Keep me"'), expect.stringContaining('"Delete me"')]);
    expect(await recordStatus(t, w, kept.id)).toBe(200);
    expect(await recordStatus(t, w, gone.id)).toBe(404);
    expect(await auditOf(t, 'delete_record')).toHaveLength(1);
  });

  it("cancel_agent_run shows the run's status; the replay after the cancel is a conflict", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const run = (await startRun(t, await invokerKey(t.rt, w), w.roomId, connector.id)).body as { id: string };
    const token = await personToken(t, w, INVOKER_SCOPES);
    const args = { roomId: w.roomId, runId: run.id };
    const asked = await callTool(t, token, 'cancel_agent_run', args);
    expect(asked.body.result.inputRequests.confirm.params.message).toMatch(
      new RegExp(`cancel_agent_run will change the agent run ${run.id} .*\\(status: queued\\)`),
    );
    const retry = { requestState: asked.body.result.requestState, inputResponses: ACCEPT };
    expect((await callTool(t, token, 'cancel_agent_run', args, retry)).body.result.structuredContent).toMatchObject({
      status: 'canceled',
    });
    const replay = await callTool(t, token, 'cancel_agent_run', args, retry);
    expect(JSON.parse(replay.body.result.content[0].text).error).toMatchObject({ code: 'conflict' });
    expect(await auditOf(t, 'cancel_agent_run')).toHaveLength(1);
  });

  it('redeliver_webhook_delivery shows the delivery; the replay after the redelivery is a conflict', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const hook = (
      await createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/hook', createdById: w.owner.id })
    ).webhook.id;
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hello' } });
    const delivery = (await call(t, 'GET', `/v1/rooms/${w.roomId}/webhooks/${hook}/deliveries`, { key: w.key })).body
      .data[0].id as string;
    const token = await personToken(t, w);
    const args = { roomId: w.roomId, webhookId: hook, deliveryId: delivery };
    const asked = await callTool(t, token, 'redeliver_webhook_delivery', args);
    expect(asked.body.result.inputRequests.confirm.params.message).toMatch(
      new RegExp(`delivery ${delivery} \\(state: \\w+, 0 redeliveries so far\\)`),
    );
    const retry = { requestState: asked.body.result.requestState, inputResponses: ACCEPT };
    expect((await callTool(t, token, 'redeliver_webhook_delivery', args, retry)).body.result.isError).toBeFalsy();
    const replay = await callTool(t, token, 'redeliver_webhook_delivery', args, retry);
    expect(JSON.parse(replay.body.result.content[0].text).error).toMatchObject({ code: 'conflict' });
    expect(await auditOf(t, 'redeliver_webhook_delivery')).toHaveLength(1);
  });
});
