import pg from 'pg';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// On SQLite a read runs first and is counted, charged and audited after it, in one commit (src/auth/meter.ts
// `settleRead`); on PostgreSQL it is counted and charged before it runs. Either way the answers, headers, charges and
// audit rows are the order of checks' (docs/security-model.md): these tests hold on both engines.

/** How many statements reading a room's messages page ran while `fn` did (better-sqlite3 and node-postgres alike). */
async function pageQueriesDuring(fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const isPage = (text: unknown) => typeof text === 'string' && /FROM "messages"/.test(text);
  const stmtProto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as {
    all: (...a: unknown[]) => unknown;
    source: string;
  };
  const all = stmtProto.all;
  stmtProto.all = function (this: { source: string }, ...a: unknown[]) {
    if (isPage(this.source)) n++;
    return all.apply(this, a);
  };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, q: unknown, ...rest: unknown[]) {
    if (isPage(typeof q === 'string' ? q : (q as { text?: string })?.text)) n++;
    return (query as (...a: unknown[]) => unknown).apply(this, [q, ...rest]);
  } as typeof query;
  try {
    await fn();
  } finally {
    stmtProto.all = all;
    pg.Client.prototype.query = query;
  }
  return n;
}

describe('a read counted, charged and audited after it runs', () => {
  it('answers and audits a read past its window or its units exactly as the order of checks says', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '3', SVC_MONTHLY_UNITS: '1000' } });
    const w = await createWorld(t.rt);
    const page = `/v1/rooms/${w.roomId}/messages?limit=50`;
    const results = await Promise.all(Array.from({ length: 8 }, () => call(t, 'GET', page, { key: w.key })));
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(3);
    expect(limited).toHaveLength(5);
    for (const r of ok) {
      expect(Array.isArray(r.body.data)).toBe(true);
      expect(r.headers.get('svc-api-units-cost')).toBe('1');
    }
    for (const r of limited) {
      // the read's answer is dropped: the refusal alone, with the window's and the uncharged balance's headers
      expect(r.body.data).toBeUndefined();
      expect(r.body.error.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
      expect(r.headers.get('svc-api-units-cost')).toBe('0');
      expect(Number(r.headers.get('svc-api-units-used'))).toBeLessThanOrEqual(3);
    }
    // one row per request, each saying what its answer said; three units spent, no more
    const rows = await listAudit(t.rt.services, { limit: 100 });
    const byId = new Map(rows.map((r) => [r.requestId, r]));
    for (const r of ok)
      expect(byId.get(r.headers.get('x-request-id')!)).toMatchObject({ statusCode: 200, units: 1, errorCode: null });
    for (const r of limited)
      expect(byId.get(r.headers.get('x-request-id')!)).toMatchObject({
        statusCode: 429,
        errorCode: 'rate_limited',
        units: 0,
      });
    expect(rows.filter((r) => r.routePattern === '/v1/rooms/{roomId}/messages')).toHaveLength(8);
  });

  it('refuses spent units after the read ran, charging nothing, and audits the refusal', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '2' } });
    const w = await createWorld(t.rt);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: w.key })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    const spent = results.filter((r) => r.status !== 200);
    expect(spent).toHaveLength(3);
    for (const r of spent) {
      expect(r.body.error.code).toBe('api_units_exhausted');
      expect(r.body.data).toBeUndefined();
      expect(r.headers.get('svc-api-units-used')).not.toBe('3');
    }
    const rows = await listAudit(t.rt.services, { limit: 100 });
    expect(rows.filter((r) => r.errorCode === 'api_units_exhausted').map((r) => r.units)).toEqual([0, 0, 0]);
    expect(rows.filter((r) => r.statusCode === 200).map((r) => r.units)).toEqual([1, 1]);
  });

  it('charges a read refused for its input nothing, in the answer, the balance and the audit row', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '100' } });
    const w = await createWorld(t.rt);
    const bad = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?limit=abc`, { key: w.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    expect(bad.headers.get('svc-api-units-cost')).toBe('0');
    expect(bad.headers.get('svc-api-units-used')).toBe('0');
    const next = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(next.headers.get('svc-api-units-used')).toBe('1');
    const [row] = await listAudit(t.rt.services, { limit: 100 }).then((rs) =>
      rs.filter((r) => r.requestId === bad.headers.get('x-request-id')),
    );
    expect(row).toMatchObject({ statusCode: 400, errorCode: 'validation_error', units: 0 });
  });

  it('refuses the reads of a caller this process has seen out of window before they run (no page read for them)', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '2' } });
    const w = await createWorld(t.rt);
    const page = `/v1/rooms/${w.roomId}/messages?limit=50`;
    const first = await pageQueriesDuring(async () => {
      for (let i = 0; i < 2; i++) expect((await call(t, 'GET', page, { key: w.key })).status).toBe(200);
    });
    expect(first).toBeGreaterThanOrEqual(2); // the spy sees the page reads that do run
    const refused = await pageQueriesDuring(async () => {
      for (let i = 0; i < 5; i++) {
        const r = await call(t, 'GET', page, { key: w.key });
        expect(r.status).toBe(429);
        expect(r.body.error.code).toBe('rate_limited');
      }
    });
    expect(refused).toBe(0);
  });

  it('after a burst past the window, refuses the next reads before they run too', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '1' } });
    const w = await createWorld(t.rt);
    const page = `/v1/rooms/${w.roomId}/messages?limit=50`;
    // together: none of them knew the window was spent when it ran
    const burst = await Promise.all(Array.from({ length: 6 }, () => call(t, 'GET', page, { key: w.key })));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(1);
    const after = await pageQueriesDuring(async () => {
      for (let i = 0; i < 3; i++) expect((await call(t, 'GET', page, { key: w.key })).status).toBe(429);
    });
    expect(after).toBe(0);
  });
});
