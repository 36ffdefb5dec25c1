import { describe, expect, it } from 'vitest';
import { createAgentRunWorker } from '../../src/agents/runWorker.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { sql } from '../../db/sql.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { startReceiver, testClock } from '../webhooks/helpers.js';
import { addConnector, getRun, invokerKey, startRun } from './helpers.js';

const liveTokens = async (rt: { ds: never } | any, runId: string) =>
  Number(
    (
      await sql<{ n: number }>(
        rt.ds,
        'SELECT COUNT(*) AS "n" FROM "oauth_tokens" WHERE "agentRunId" = ? AND "revokedAt" IS NULL',
        [runId],
      )
    ).rows[0].n,
  );

describe('agent run invocation: signed, retried like webhooks, bounded by a deadline', () => {
  it("signs the invocation with the connector's secret and finishes the run from the answer", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([
      {
        status: 200,
        body: JSON.stringify({ status: 'succeeded', output: { n: 1 } }),
        headers: { 'content-type': 'application/json' },
      },
    ]);
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, c.id)).body;
    await createAgentRunWorker({ services: t.rt.services }).runOnce();
    const req = rx.requests[0];
    const v = verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: [c.secret] });
    expect(v).toMatchObject({ ok: true, eventId: run.id });
    expect(verifyWebhook({ rawBody: req.body, headers: req.headers, secrets: ['whsec_other'] }).ok).toBe(false);
    const body = JSON.parse(req.body.toString('utf8'));
    expect(body.delegation.accessToken).toMatch(/^svc_at_/);
    expect(body.delegation.resource).toBe(`${t.baseUrl}/mcp`);
    expect((await getRun(t, key, w.roomId, run.id)).body).toMatchObject({
      status: 'succeeded',
      output: { n: 1 },
      attempts: 1,
    });
    // the run's answer never shows the token, and the token was revoked with the run's end
    expect(JSON.stringify((await getRun(t, key, w.roomId, run.id)).body)).not.toContain(body.delegation.accessToken);
    expect(await liveTokens(t.rt, run.id)).toBe(0);
  });

  it('fails a run whose connector answers garbage with a readable error, and revokes its token', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([
      { status: 200, body: '<html>hello</html>' },
      { status: 200, body: '{"status":"maybe"}' },
    ]);
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const a = (await startRun(t, key, w.roomId, c.id)).body;
    await createAgentRunWorker({ services: t.rt.services }).runOnce();
    const b = (await startRun(t, key, w.roomId, c.id)).body;
    await createAgentRunWorker({ services: t.rt.services }).runOnce();
    for (const id of [a.id, b.id]) {
      const r = (await getRun(t, key, w.roomId, id)).body;
      expect(r).toMatchObject({ status: 'failed', output: null, created: [] });
      expect(r.error).toMatch(/^connector_answer_invalid: /);
      expect(await liveTokens(t.rt, id)).toBe(0);
    }
  });

  it('retries 5xx with backoff, stops at a 4xx, never follows a redirect', async () => {
    const clock = testClock('2026-11-23T10:00:00.000Z');
    await using t = await startTestServer({ now: clock.now });
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([
      { status: 503 },
      { status: 200, body: '{"status":"succeeded","output":"second time"}' },
      { status: 404 },
      { status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } },
    ]);
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const worker = createAgentRunWorker({ services: t.rt.services });
    const retried = (await startRun(t, key, w.roomId, c.id)).body;
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, retried.id)).body).toMatchObject({
      status: 'running',
      attempts: 1,
      error: 'the connector answered 503',
    });
    expect(await worker.runOnce()).toBe(0); // not due before the backoff
    clock.advance(2000);
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, retried.id)).body).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      output: 'second time',
    });
    // both attempts carried the same run id (the connector's deduplication key)
    expect(rx.requests.slice(0, 2).map((r) => r.headers['svc-webhook-id'])).toEqual([retried.id, retried.id]);

    const stopped = (await startRun(t, key, w.roomId, c.id)).body;
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, stopped.id)).body).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'the connector answered 404',
    });
    const redirected = (await startRun(t, key, w.roomId, c.id)).body;
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, redirected.id)).body.error).toMatch(/^redirect_not_followed/);
    expect(rx.requests).toHaveLength(4);
  });

  it('fails a run the connector accepted but never completed once its deadline passes', async () => {
    const clock = testClock('2026-11-23T10:00:00.000Z');
    await using t = await startTestServer({ now: clock.now, env: { SVC_AGENT_RUN_DEADLINE_MS: '60000' } });
    const w = await createWorld(t.rt);
    await using rx = await startReceiver([{ status: 202 }]);
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, c.id)).body;
    expect(run.deadlineAt).toBe('2026-11-23T10:01:00.000Z');
    const worker = createAgentRunWorker({ services: t.rt.services });
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, run.id)).body.status).toBe('running');
    clock.advance(59_000);
    expect(await worker.runOnce()).toBe(0);
    clock.advance(1_000);
    await worker.runOnce();
    expect((await getRun(t, key, w.roomId, run.id)).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^deadline_exceeded/),
    });
    expect(await liveTokens(t.rt, run.id)).toBe(0);
    expect(rx.requests).toHaveLength(1);
  });

  it('creates one run per Idempotency-Key, charges 10 API units per run, and accepts a task of the room to work on', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/x');
    const key = await invokerKey(t.rt, w);
    const task = (await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key, body: { title: 'Plan' } })).body;
    const body = { connectorId: c.id, input: { text: 'split this task', taskId: task.id } };
    const headers = { 'idempotency-key': 'run-once-1' };
    const first = await call(t, 'POST', `/v1/rooms/${w.roomId}/agent-runs`, { key, body, headers });
    expect(first.status).toBe(202);
    expect(first.headers.get('svc-api-units-cost')).toBe('10');
    expect(first.body.input).toEqual({ text: 'split this task', recordId: null, taskId: task.id });
    const again = await call(t, 'POST', `/v1/rooms/${w.roomId}/agent-runs`, { key, body, headers });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs`, { key });
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([first.body.id]);
  });

  it('fails the run unsent when the connector was deactivated before its invocation', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using rx = await startReceiver();
    const c = await addConnector(t.rt, w.orgId, rx.url);
    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, c.id)).body;
    await sql(t.rt.ds, 'UPDATE "agent_connectors" SET "active" = ? WHERE "id" = ?', [false, c.id]);
    await createAgentRunWorker({ services: t.rt.services }).runOnce();
    expect((await getRun(t, key, w.roomId, run.id)).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^connector_inactive/),
    });
    expect(rx.requests).toHaveLength(0);
  });
});
