import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';

const RATE_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'svc-ratelimit-scope',
];
const UNIT_HEADERS = [
  'svc-api-units-limit',
  'svc-api-units-remaining',
  'svc-api-units-used',
  'svc-api-units-cost',
  'svc-api-units-reset',
];

describe('rate limit', () => {
  it('counts a 60 s window per API key and answers 429 rate_limited with Retry-After', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '3' } });
    const w = await createWorld(t.rt);
    const other = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(t, 'GET', '/v1/me', { key: w.key });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('3;w=60');
      expect(r.headers.get('svc-ratelimit-scope')).toBe('api_key');
      seen.push(Number(r.headers.get('ratelimit-remaining')));
    }
    expect(seen).toEqual([2, 1, 0]);
    const over = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const h of [...RATE_HEADERS, ...UNIT_HEADERS]) expect(over.headers.get(h), h).not.toBeNull();
    expect(over.headers.get('svc-api-units-cost')).toBe('0');
    // another key of the same user has its own window
    expect((await call(t, 'GET', '/v1/me', { key: other.token })).status).toBe(200);
  });

  it('charges units only to the requests the window allows, also when many arrive at once', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '3' } });
    const w = await createWorld(t.rt);
    // on SQLite the count and the charge of requests arriving together are written in one commit
    const results = await Promise.all(Array.from({ length: 12 }, () => call(t, 'GET', '/v1/me', { key: w.key })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(9);
    for (const r of limited) {
      expect(r.body.error.code).toBe('rate_limited');
      expect(r.headers.get('svc-api-units-cost')).toBe('0');
      expect(Number(r.headers.get('svc-api-units-used'))).toBeLessThanOrEqual(3);
    }
    // another key of the organization shares the balance: three units were spent, no more
    const other = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    expect((await call(t, 'GET', '/v1/me', { key: other.token })).headers.get('svc-api-units-used')).toBe('4');
  });

  it('sends the rate-limit headers on errors too, and counts unauthenticated requests per address', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '2' } });
    const r1 = await call(t, 'GET', '/v1/me', { key: 'svc_test_' + 'x'.repeat(43) });
    expect(r1.status).toBe(401);
    expect(r1.headers.get('svc-ratelimit-scope')).toBe('ip');
    expect(r1.headers.get('ratelimit-remaining')).toBe('1');
    await call(t, 'GET', '/v1/me');
    const r3 = await call(t, 'GET', '/v1/me');
    expect(r3.status).toBe(429);
    expect(r3.body.error.code).toBe('rate_limited');
  });
});

describe('monthly API units', () => {
  it('charges each operation its cost and answers 429 api_units_exhausted when spent', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '5' } });
    const w = await createWorld(t.rt);
    const a = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(a.headers.get('svc-api-units-cost')).toBe('1');
    expect(a.headers.get('svc-api-units-used')).toBe('1');
    expect(a.headers.get('svc-api-units-remaining')).toBe('4');
    expect(a.headers.get('svc-api-units-limit')).toBe('5');
    expect(a.headers.get('svc-api-units-reset')).toMatch(/^\d{4}-\d{2}-01T00:00:00\+00:00$/);
    const room = await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'costly' } });
    expect(room.status).toBe(429); // create_room costs 5: 1 + 5 > 5
    expect(room.body.error.code).toBe('api_units_exhausted');
    expect(room.headers.get('ratelimit-limit')).not.toBeNull();
    const rooms = await call(t, 'GET', '/v1/rooms', { key: w.key });
    expect(rooms.body.data.map((r: any) => r.name)).not.toContain('costly');
    // used: 1 (me) + 1 (rooms) -> three more 1-unit calls fit
    for (let i = 0; i < 3; i++) expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    const spent = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(spent.status).toBe(429);
    expect(spent.body.error.code).toBe('api_units_exhausted');
    expect(spent.headers.get('svc-api-units-remaining')).toBe('0');
    expect(spent.headers.get('retry-after')).toBeNull();
  });

  it('charges nothing for a request refused for its input, and charges domain refusals', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '100' } });
    const w = await createWorld(t.rt);
    const bad = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 42 } });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('svc-api-units-cost')).toBe('0');
    expect(bad.headers.get('svc-api-units-used')).toBe('0');
    const missing = await call(t, 'GET', '/v1/rooms/room_01KAR3V6X5Q2Z8N4M7P9W1T3YB', { key: w.key });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('svc-api-units-cost')).toBe('1');
    expect(missing.headers.get('svc-api-units-used')).toBe('1');
  });

  it('counts per billing entity: two keys of one organization share the balance, a personal key does not', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '3' } });
    const w = await createWorld(t.rt);
    const k2 = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['me:read'] });
    const personal = await issueKey(t.rt, { userId: w.member.id, scopes: ['me:read'] });
    await call(t, 'GET', '/v1/me', { key: w.key });
    await call(t, 'GET', '/v1/me', { key: k2.token });
    await call(t, 'GET', '/v1/me', { key: w.key });
    expect((await call(t, 'GET', '/v1/me', { key: k2.token })).status).toBe(429);
    const p = await call(t, 'GET', '/v1/me', { key: personal.token });
    expect(p.status).toBe(200);
    expect(p.body.billingContext).toBe('individual');
  });

  it('never overspends under concurrent requests', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '10' } });
    const w = await createWorld(t.rt);
    const results = await Promise.all(Array.from({ length: 30 }, () => call(t, 'GET', '/v1/me', { key: w.key })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.error.code === 'api_units_exhausted')).toBe(
      true,
    );
    const used = Math.max(...results.map((r) => Number(r.headers.get('svc-api-units-used'))));
    expect(used).toBe(10);
  });

  it('resets at the start of the next UTC month and survives a restart', async () => {
    let now = new Date('2026-11-30T23:59:00.000Z');
    const clock = () => now;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-units-'));
    const first = await startTestServer({ env: { SVC_MONTHLY_UNITS: '2' }, now: clock, dataDir });
    const w = await createWorld(first.rt);
    await call(first, 'GET', '/v1/me', { key: w.key });
    await call(first, 'GET', '/v1/me', { key: w.key });
    await first.close();
    const t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '2' }, now: clock, dataDir });
    const spent = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(spent.status).toBe(429);
    expect(spent.headers.get('svc-api-units-reset')).toBe('2026-12-01T00:00:00+00:00');
    now = new Date('2026-12-01T00:00:01.000Z');
    const fresh = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('svc-api-units-used')).toBe('1');
    expect(fresh.headers.get('svc-api-units-reset')).toBe('2027-01-01T00:00:00+00:00');
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
