import { afterAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../webhooks/helpers.js';
import { spawnServer, svc, tempEnv, waitFor } from '../webhooks/processes.js';

describe('crash safety of agent run invocations (the real server as a child process)', () => {
  const tmp = tempEnv({ SVC_AGENT_LEASE_MS: '4000' });
  afterAll(() => tmp.remove());

  it('invokes a run again after a SIGKILL mid-invocation: at least once, at most once more, same run id', async () => {
    // the connector: the first invocation hangs (the server dies while waiting for it), the next one succeeds
    await using rx = await startReceiver([
      'hang',
      { status: 200, body: JSON.stringify({ status: 'succeeded', output: { ok: true } }) },
    ]);
    const org = await svc(tmp.env, ['org', 'create', '--name', 'Crash']);
    const user = await svc(tmp.env, [
      'user',
      'create',
      '--email',
      'crash@example.test',
      '--name',
      'Ann',
      '--password',
      'pw-crash-secret',
      '--org',
      org.id,
      '--role',
      'owner',
    ]);
    const room = await svc(tmp.env, ['room', 'create', '--name', 'General', '--created-by', user.id, '--org', org.id]);
    const key = await svc(tmp.env, [
      'key',
      'create',
      '--user',
      user.id,
      '--org',
      org.id,
      '--name',
      'ci',
      '--scopes',
      'agent:invoke,mcp:tools,messages:write',
      '--mode',
      'test',
    ]);
    const connector = await svc(tmp.env, [
      'connector',
      'create',
      '--org',
      org.id,
      '--name',
      'Slow',
      '--url',
      rx.url,
      '--scopes',
      'mcp:tools,messages:write',
    ]);
    expect(connector.secret).toMatch(/^whsec_/);

    const first = await spawnServer({ ...tmp.env, SVC_WORKER: 'on' });
    const auth = { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' };
    const res = await fetch(`${first.base}/v1/rooms/${room.id}/agent-runs`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ connectorId: connector.id, input: { text: 'work' } }),
    });
    expect(res.status).toBe(202);
    const run = (await res.json()) as { id: string };
    await waitFor(() => rx.requests.length >= 1, 'the first invocation');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnServer({ ...tmp.env, SVC_WORKER: 'on' });
    try {
      const get = async () =>
        (await (await fetch(`${second.base}/v1/rooms/${room.id}/agent-runs/${run.id}`, { headers: auth })).json()) as {
          status: string;
          attempts: number;
        };
      await waitFor(async () => (await get()).status === 'succeeded', 'the run to succeed after the restart', 60_000);
      expect(await get()).toMatchObject({ status: 'succeeded', attempts: 2 });
    } finally {
      second.child.kill('SIGTERM');
    }
    expect(await second.exited).toBe(0);
    expect(rx.requests).toHaveLength(2);
    expect(rx.requests.map((r) => r.headers['svc-webhook-id'])).toEqual([run.id, run.id]);
    const db = tmp.db();
    const tokens = db
      .prepare('SELECT COUNT(*) AS n FROM oauth_tokens WHERE "agentRunId" = ? AND "revokedAt" IS NULL')
      .get(run.id) as { n: number };
    const row = db.prepare('SELECT "leaseOwner" FROM agent_runs WHERE id = ?').get(run.id) as {
      leaseOwner: string | null;
    };
    db.close();
    expect(tokens.n).toBe(0);
    expect(row.leaseOwner).toBeNull();
  }, 180_000);
});
