import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

describe('Idempotency-Key', () => {
  it('replays the first response with Idempotent-Replayed and makes one side effect', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const path = `/v1/rooms/${w.roomId}/messages`;
    const first = await call(t, 'POST', path, {
      key: w.key,
      body: { body: 'hello' },
      headers: { 'Idempotency-Key': 'abc-1' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await call(t, 'POST', path, {
      key: w.key,
      body: { body: 'hello' },
      headers: { 'Idempotency-Key': '"abc-1"' },
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('svc-api-units-cost')).toBe('0');
    const list = await call(t, 'GET', `${path}?limit=200`, { key: w.key });
    expect(list.body.data).toHaveLength(1);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, and changes nothing', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const path = `/v1/rooms/${w.roomId}/messages`;
    await call(t, 'POST', path, { key: w.key, body: { body: 'one' }, headers: { 'Idempotency-Key': 'k' } });
    const r = await call(t, 'POST', path, { key: w.key, body: { body: 'two' }, headers: { 'Idempotency-Key': 'k' } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('idempotency_key_reused');
    expect(r.body.error.requestId).toBe(r.headers.get('x-request-id'));
    const list = await call(t, 'GET', path, { key: w.key });
    expect(list.body.data.map((m: any) => m.body)).toEqual(['one']);
  });

  it('scopes keys to the path: the same key on another path is a new request', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const a = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
      key: w.key,
      body: { body: 'x' },
      headers: { 'Idempotency-Key': 'same' },
    });
    const b = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
      key: w.key,
      body: { title: 'x' },
      headers: { 'Idempotency-Key': 'same' },
    });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });

  it('twenty concurrent requests with one key make exactly one side effect', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const path = `/v1/rooms/${w.roomId}/messages`;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(t, 'POST', path, { key: w.key, body: { body: 'once' }, headers: { 'Idempotency-Key': 'race' } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('idempotency_key_in_use');
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const list = await call(t, 'GET', `${path}?limit=200`, { key: w.key });
    expect(list.body.data).toHaveLength(1);
  });

  it('rejects malformed keys with 400 validation_error', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
      const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
        key: w.key,
        body: { body: 'x' },
        headers: { 'Idempotency-Key': bad },
      });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.code).toBe('validation_error');
    }
  });

  it('forgets a key whose request failed, so a corrected retry can use it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const path = `/v1/rooms/${w.roomId}/tasks`;
    const bad = await call(t, 'POST', path, {
      key: w.key,
      body: { title: 'x', startDate: '2026-12-02', dueDate: '2026-12-01' },
      headers: { 'Idempotency-Key': 'retry' },
    });
    expect(bad.status).toBe(400);
    const again = await call(t, 'POST', path, {
      key: w.key,
      body: { title: 'x', startDate: '2026-12-02', dueDate: '2026-12-01' },
      headers: { 'Idempotency-Key': 'retry' },
    });
    expect(again.status).toBe(400);
  });
});

describe('abandoned idempotency claims', () => {
  it('takes over a claim left unfinished for more than five minutes instead of answering 409 for a day', async () => {
    let now = new Date('2026-11-22T10:00:00.000Z');
    await using t = await startTestServer({ now: () => now });
    const w = await createWorld(t.rt);
    const { beginIdempotent } = await import('../../src/auth/idempotency.js');
    const { fingerprint } = await import('../../src/auth/idempotency.js');
    const path = `/v1/rooms/${w.roomId}/messages`;
    const input = { body: 'late', roomId: w.roomId };
    // a claim whose request died before it could finish or release it
    await beginIdempotent(
      t.rt.services,
      { credentialId: `api_key:${w.keyId}`, method: 'POST', path, key: 'orphan' },
      fingerprint(input),
    );
    const busy = await call(t, 'POST', path, {
      key: w.key,
      body: { body: 'late' },
      headers: { 'Idempotency-Key': 'orphan' },
    });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('idempotency_key_in_use');
    now = new Date('2026-11-22T10:06:00.000Z');
    const retried = await call(t, 'POST', path, {
      key: w.key,
      body: { body: 'late' },
      headers: { 'Idempotency-Key': 'orphan' },
    });
    expect(retried.status).toBe(201);
  });
});
