import type { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { bodyOf, postMcp, toolCall } from '../mcp/mcpClient.js';

/** A trigger on `table` that runs `body` (PL/pgSQL) before each row is inserted or updated. */
async function trigger(ds: DataSource, table: string, when: 'INSERT' | 'UPDATE', body: string) {
  await ds.query(`CREATE FUNCTION svc_fault() RETURNS trigger AS $$ BEGIN ${body} RETURN NEW; END $$ LANGUAGE plpgsql`);
  await ds.query(`CREATE TRIGGER svc_fault BEFORE ${when} ON ${table} FOR EACH ROW EXECUTE FUNCTION svc_fault()`);
  return async () => {
    await ds.query(`DROP TRIGGER svc_fault ON ${table}`);
    await ds.query('DROP FUNCTION svc_fault()');
  };
}

const messageCount = async (ds: DataSource) =>
  Number((await ds.query(`SELECT count(*) AS n FROM events WHERE type = 'message.created'`))[0].n);

describe('PostgreSQL faults', () => {
  it('a database that is not there answers 503 with Retry-After on REST and MCP, never 500', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ds = t.rt.services.ds;
    const path = `/v1/rooms/${w.roomId}/messages`;
    // what a restarting server answers: admin shutdown, crash shutdown, a connection failure (class 08)
    for (const code of ['57P01', '57P02', '08006', '57P03']) {
      const heal = await trigger(ds, 'messages', 'INSERT', `RAISE EXCEPTION 'injected' USING ERRCODE = '${code}';`);
      const rest = await call(t, 'POST', path, { key: w.key, body: { body: 'x' } });
      expect(rest.status, code).toBe(503);
      expect(rest.headers.get('retry-after')).toBe('1');
      expect(rest.body.error.code).toBe('service_unavailable');
      const mcp = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'x' }), { token: w.key });
      expect(mcp.body.result.isError).toBe(true);
      expect(bodyOf(mcp.body.result).error.code).toBe('service_unavailable');
      await heal();
    }
    expect(await messageCount(ds)).toBe(0);
  });

  it('a connection cut between the write and its key: nothing is written, the retry writes exactly once', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ds = t.rt.services.ds;
    const path = `/v1/rooms/${w.roomId}/messages`;
    const send = () =>
      call(t, 'POST', path, { key: w.key, body: { body: 'once' }, headers: { 'Idempotency-Key': 'cut-1' } });
    // the connection of the write is terminated at the moment its key is marked done
    const heal = await trigger(
      ds,
      'idempotency_keys',
      'UPDATE',
      `IF NEW.state = 'done' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;`,
    );
    const cut = await send();
    expect(cut.status).toBe(503);
    expect(cut.headers.get('retry-after')).toBe('1');
    expect(await messageCount(ds)).toBe(0);
    await heal();
    // the failed request released its key: the retry runs, once, and its answer is replayed after
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(retried.body.id);
    expect(await messageCount(ds)).toBe(1);
  });

  it('audit rows the database cannot take are kept, in order, and written when it is back', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ds = t.rt.services.ds;
    const heal = await trigger(ds, 'audit_log', 'INSERT', `RAISE EXCEPTION 'injected' USING ERRCODE = '57P01';`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(t, 'GET', '/v1/me', { key: w.key });
      expect(r.status).toBe(200);
      ids.push(r.headers.get('x-request-id')!);
    }
    const rows = async () =>
      (
        await ds.query(`SELECT "requestId" FROM audit_log WHERE "requestId" = ANY($1) ORDER BY "createdAt", id`, [ids])
      ).map((r: { requestId: string }) => r.requestId);
    expect(await rows()).toEqual([]);
    const { pendingAuditRows } = await import('../../src/auth/audit.js');
    expect(pendingAuditRows(t.rt.services)).toBe(5);
    await heal();
    // written by the retry (every second) or ahead of the next row, whichever comes first
    for (let i = 0; i < 600 && pendingAuditRows(t.rt.services) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await rows()).toEqual(ids);
    expect(pendingAuditRows(t.rt.services)).toBe(0);
  });
});
