import { describe, expect, it } from 'vitest';
import { failKeyCompletion } from '../helpers/faults.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

describe('an Idempotency-Key and its write commit together', () => {
  it('a failure while marking the key done rolls the write back; the retry writes exactly once', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ds = t.rt.services.ds;
    const path = `/v1/rooms/${w.roomId}/messages`;
    const send = () =>
      call(t, 'POST', path, { key: w.key, body: { body: 'once' }, headers: { 'Idempotency-Key': 'fault-1' } });
    const created = async () =>
      Number((await ds.query(`SELECT count(*) AS n FROM events WHERE type = 'message.created'`))[0].n);

    const heal = await failKeyCompletion(ds);
    const failed = await send();
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const none = await call(t, 'GET', path, { key: w.key });
    expect(none.body.data).toHaveLength(0);
    expect(await created()).toBe(0);

    await heal();
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await send();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(retried.body);
    const list = await call(t, 'GET', path, { key: w.key });
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([retried.body.id]);
    expect(await created()).toBe(1);
  });

  it('a write whose claim was taken over meanwhile rolls back instead of writing a second time', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ds = t.rt.services.ds;
    const path = `/v1/rooms/${w.roomId}/messages`;
    // while the write runs, another request takes its claim over (as after the stale-claim delay): a claim token
    // that is not this request's
    const takeOver = `UPDATE idempotency_keys SET "statusCode" = -7 WHERE state = 'in_flight'`;
    if (ds.options.type === 'postgres') {
      await ds.query(
        `CREATE FUNCTION svc_take_over() RETURNS trigger AS $$ BEGIN ${takeOver}; RETURN NEW; END $$ LANGUAGE plpgsql`,
      );
      await ds.query(
        'CREATE TRIGGER svc_take_over BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION svc_take_over()',
      );
    } else {
      await ds.query(`CREATE TRIGGER svc_take_over BEFORE INSERT ON messages BEGIN ${takeOver}; END`);
    }
    const r = await call(t, 'POST', path, {
      key: w.key,
      body: { body: 'slow' },
      headers: { 'Idempotency-Key': 'slow-1' },
    });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('idempotency_key_in_use');
    const list = await call(t, 'GET', path, { key: w.key });
    expect(list.body.data).toHaveLength(0);
  });
});
