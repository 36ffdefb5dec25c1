import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createAgentConnector } from '../../examples/agent-connector.js';
import { sql } from '../../db/sql.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { addConnector, auditRowsOfRun, getRun, invokeDue, invokerKey, startRun } from './helpers.js';

describe('examples/agent-connector.ts end to end', () => {
  it('turns the lines of the input into tasks and posts a summary, as actor=agent for the invoking human', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const placeholder = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/invoke');
    const server = createAgentConnector([placeholder.secret]);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      await sql(t.rt.ds, 'UPDATE "agent_connectors" SET "url" = ? WHERE "id" = ?', [
        `http://127.0.0.1:${port}/invoke`,
        placeholder.id,
      ]);
      const key = await invokerKey(t.rt, w);
      const started = await startRun(t, key, w.roomId, placeholder.id, {
        text: '- Book the venue\n- Send invitations\n\n3. Order food',
      });
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({
        status: 'queued',
        connectorId: placeholder.id,
        delegatingUserId: w.owner.id,
        attempts: 0,
        created: [],
      });
      expect(started.body.scopes).not.toContain('agent:invoke');

      expect(await invokeDue(t.rt)).toBe(1);
      const run = (await getRun(t, key, w.roomId, started.body.id)).body;
      expect(run).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
      expect(run.output.tasks).toHaveLength(3);
      expect(run.created.map((c: { type: string }) => c.type).sort()).toEqual(['message', 'task', 'task', 'task']);

      const tasks = (await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks`, { key })).body.data;
      expect(tasks.map((x: { title: string }) => x.title)).toEqual([
        'Book the venue',
        'Send invitations',
        'Order food',
      ]);
      expect(
        tasks.every(
          (x: { agentRunId: string; createdById: string }) => x.agentRunId === run.id && x.createdById === w.owner.id,
        ),
      ).toBe(true);
      const msgs = (await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key })).body.data;
      expect(msgs).toHaveLength(1);
      expect(msgs[0]).toMatchObject({ postedBy: 'agent', authorId: w.owner.id, agentRunId: run.id });
      expect(msgs[0].body).toContain('Created 3 tasks');

      // the same events as any write
      const events = (await call(t, 'GET', `/v1/events?roomId=${w.roomId}`, { key })).body.data.map(
        (e: { type: string }) => e.type,
      );
      expect(events.filter((e: string) => e === 'task.created')).toHaveLength(3);
      expect(events).toContain('message.created');

      // everything the agent did is audited as actor=agent with the delegating user and the run
      const audit = await auditRowsOfRun(t.rt, run.id);
      expect(audit.filter((a) => a.routePattern === 'create_task')).toHaveLength(3);
      expect(audit.some((a) => a.routePattern === 'create_message')).toBe(true);
      expect(audit.every((a) => a.actor === 'agent' && a.delegatingUserId === w.owner.id && a.surface === 'mcp')).toBe(
        true,
      );

      // the run's tokens are revoked now that it ended
      const live = await sql<{ n: number }>(
        t.rt.ds,
        'SELECT COUNT(*) AS "n" FROM "oauth_tokens" WHERE "agentRunId" = ? AND "revokedAt" IS NULL',
        [run.id],
      );
      expect(Number(live.rows[0].n)).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("works from a record's body", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const c = await addConnector(t.rt, w.orgId, 'http://127.0.0.1:9/invoke');
    const server = createAgentConnector([c.secret]);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await sql(t.rt.ds, 'UPDATE "agent_connectors" SET "url" = ? WHERE "id" = ?', [
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/invoke`,
        c.id,
      ]);
      const key = await invokerKey(t.rt, w);
      const rec = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
        key,
        body: { title: 'Minutes', body: 'Fix the door\nPaint the hall' },
      });
      const started = await startRun(t, key, w.roomId, c.id, { text: 'Tasks from the minutes', recordId: rec.body.id });
      await invokeDue(t.rt);
      const run = (await getRun(t, key, w.roomId, started.body.id)).body;
      expect(run.status).toBe('succeeded');
      const titles = (await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks`, { key })).body.data.map(
        (x: { title: string }) => x.title,
      );
      expect(titles).toEqual(['Fix the door', 'Paint the hall']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
