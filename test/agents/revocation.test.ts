import { describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { sql } from '../../db/sql.js';
import { inTransaction } from '../../db/transaction.js';
import { call, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { obtainTokens, postForm, registerClient } from '../oauth/oauthHelpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { DevBrowser } from '../web/developerHelpers.js';
import { addConnector, INVOKER_SCOPES, invokeDue, startRun } from './helpers.js';

// Penetration test 3, finding 6 (SECURITY.md): a run acts on the authority of the credential that started it.
// Revoking that credential (an API key, an OAuth token), or the delegating user leaving the organization,
// ends the run (canceled, credential_revoked) and its delegated token gets 401 from its next call on.

/**
 * A connector that accepts every invocation (202) and keeps it; `tokenOf(runId)` is the delegated token sent for a run.
 */
async function acceptingConnector(t: TestServer, orgId: string) {
  const rx = await startReceiver();
  rx.script.push(...Array.from({ length: 20 }, () => ({ status: 202 })));
  const c = await addConnector(t.rt, orgId, rx.url);
  const tokenOf = (runId: string) => {
    const sent = rx.requests.map((r) => JSON.parse(r.body.toString('utf8'))).filter((b) => b.run.id === runId);
    return sent[sent.length - 1].delegation.accessToken as string;
  };
  return { rx, c, tokenOf };
}

const say = (t: TestServer, token: string, roomId: string, body: string) =>
  postMcp(t, toolCall('create_message', { roomId, body }), { token });

async function runRow(t: TestServer, runId: string) {
  return (
    await sql<{ status: string; error: string | null }>(
      t.rt.ds,
      'SELECT "status", "error" FROM "agent_runs" WHERE "id" = ?',
      [runId],
    )
  ).rows[0];
}

describe('agent runs end with the credential that started them (penetration test 3)', () => {
  it('revoking the API key ends its runs at once: the delegated token gets 401, the run list shows them canceled, a queued one is never invoked', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const invoker = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const reader = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const running = (await startRun(t, invoker.token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    const token = tokenOf(running.id);
    expect((await say(t, token, w.roomId, 'before')).body.result.isError).toBeFalsy();
    const queued = (await startRun(t, invoker.token, w.roomId, c.id)).body;
    // another key's run is not touched
    const other = (await startRun(t, reader.token, w.roomId, c.id)).body;

    // what `svc key revoke` and the developer settings page call
    const revoked = await inTransaction(t.rt.services, (m) => revokeApiKey(m, t.rt.services.now(), invoker.id));

    const refused = await say(t, token, w.roomId, 'after the key was revoked');
    expect(refused.status).toBe(401);
    expect(revoked?.runsEnded.sort()).toEqual([running.id, queued.id].sort());
    const listed = await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs`, { key: reader.token });
    const byId = new Map(
      (listed.body.data as { id: string; status: string; error: string | null; finishedAt: string | null }[]).map(
        (r) => [r.id, r],
      ),
    );
    for (const id of [running.id, queued.id]) {
      expect(byId.get(id)).toMatchObject({
        status: 'canceled',
        error: expect.stringMatching(/^credential_revoked: the API key/),
        finishedAt: expect.any(String),
      });
    }
    expect(byId.get(other.id)).toMatchObject({ status: 'queued' });
    const invocations = rx.requests.length;
    await invokeDue(t.rt);
    const invoked = rx.requests.slice(invocations).map((r) => JSON.parse(r.body.toString('utf8')).run.id);
    expect(invoked).toEqual([other.id]);
    expect(
      Number(
        (
          await sql<{ n: number }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "messages" WHERE "agentRunId" = ?', [
            running.id,
          ])
        ).rows[0].n,
      ),
    ).toBe(1);
  });

  it('revoking the key on the developer settings page ends its running run as well', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const invoker = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const run = (await startRun(t, invoker.token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    const b = await DevBrowser.signedIn(t, w.owner);
    await b.page();
    const done = await b.submit('/settings/developer/keys/revoke', { key: invoker.id, confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(await runRow(t, run.id)).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked: the API key/),
    });
    expect((await say(t, tokenOf(run.id), w.roomId, 'after')).status).toBe(401);
  });

  it("a key revoked behind the domain's back (the row changed directly): the token is refused at its next call and the run ends then", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const invoker = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const run = (await startRun(t, invoker.token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    await sql(t.rt.ds, 'UPDATE "api_keys" SET "revokedAt" = ? WHERE "id" = ?', [new Date().toISOString(), invoker.id]);
    expect(await runRow(t, run.id)).toMatchObject({ status: 'running' });
    expect((await say(t, tokenOf(run.id), w.roomId, 'x')).status).toBe(401);
    expect(await runRow(t, run.id)).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked/),
    });
  });

  it("revoking the OAuth access token that started runs (POST /oauth/revoke): the delegated token gets 401 and the runs end, at its next call or the worker's next round", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const client = await registerClient(t);
    const tokens = await obtainTokens(t, w, client, {
      scope: 'agent:invoke rooms:read messages:read messages:write mcp:tools',
    });
    const a = await startRun(t, tokens.access_token, w.roomId, c.id);
    expect(a.status).toBe(202);
    const b = (await startRun(t, tokens.access_token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    expect((await say(t, tokenOf(a.body.id), w.roomId, 'before')).body.result.isError).toBeFalsy();

    const revoked = await postForm(t, '/oauth/revoke', { token: tokens.access_token, client_id: client.clientId });
    expect(revoked.status).toBe(200);
    // discovered by the delegated token's next call
    expect((await say(t, tokenOf(a.body.id), w.roomId, 'after')).status).toBe(401);
    const reader = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const got = await call(t, 'GET', `/v1/rooms/${w.roomId}/agent-runs/${a.body.id}`, { key: reader.token });
    expect(got.body).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked: the OAuth token/),
    });
    // discovered by the worker: the other run awaited its connector's completion, and ends without waiting for its
    // deadline
    expect(await runRow(t, b.id)).toMatchObject({ status: 'running' });
    await invokeDue(t.rt);
    expect(await runRow(t, b.id)).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked: the OAuth token/),
    });
    expect((await say(t, tokenOf(b.id), w.roomId, 'after')).status).toBe(401);
  });

  it('revoking the OAuth grant (its refresh token at POST /oauth/revoke) ends the runs its access token started', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const client = await registerClient(t);
    const tokens = await obtainTokens(t, w, client, {
      scope: 'agent:invoke rooms:read messages:read messages:write mcp:tools',
    });
    const run = (await startRun(t, tokens.access_token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    expect(
      (await postForm(t, '/oauth/revoke', { token: tokens.refresh_token, client_id: client.clientId })).status,
    ).toBe(200);
    expect((await say(t, tokenOf(run.id), w.roomId, 'after')).status).toBe(401);
    expect(await runRow(t, run.id)).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked: the OAuth token/),
    });
  });

  it('the delegating user leaving the organization ends the run as well', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { rx, c, tokenOf } = await acceptingConnector(t, w.orgId);
    await using _rx = rx;
    const invoker = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: INVOKER_SCOPES });
    const run = (await startRun(t, invoker.token, w.roomId, c.id)).body;
    await invokeDue(t.rt);
    await sql(t.rt.ds, 'DELETE FROM "memberships" WHERE "organizationId" = ? AND "userId" = ?', [w.orgId, w.member.id]);
    expect((await say(t, tokenOf(run.id), w.roomId, 'x')).status).toBe(401);
    expect(await runRow(t, run.id)).toMatchObject({
      status: 'canceled',
      error: expect.stringMatching(/^credential_revoked: the delegating user/),
    });
  });
});
