import { describe, expect, it } from 'vitest';
import { isPostgres, sql } from '../../db/sql.js';
import { listAudit } from '../../src/auth/audit.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// db/sql.ts groups the writes made outside any transaction on SQLite into one commit per turn of the
// event loop (bench/README.md). Grouping must not change what each caller sees: every write that its
// caller saw succeed is committed, a failing statement fails alone, and concurrent requests each keep
// their own audit row and unit charge.

const insertSetting = (ds: Parameters<typeof sql>[0], key: string) =>
  sql(ds, 'INSERT INTO "settings" ("key", "value") VALUES (?, ?)', [key, 'v']);

describe('writes outside a transaction (group commit on SQLite)', () => {
  it('writes issued together all commit, and a failing one fails alone', async () => {
    await using t = await startTestServer();
    const ds = t.rt.services.ds;
    await insertSetting(ds, 'taken');
    const keys = Array.from({ length: 20 }, (_, i) => `group-${i}`);
    const results = await Promise.allSettled([...keys.map((k) => insertSetting(ds, k)), insertSetting(ds, 'taken')]);
    expect(results.slice(0, 20).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[20].status).toBe('rejected');
    const stored = await sql<{ key: string }>(ds, 'SELECT "key" FROM "settings" WHERE "key" LIKE ? ORDER BY "key"', [
      'group-%',
    ]);
    expect(stored.rows.map((r) => r.key).sort()).toEqual([...keys].sort());
    if (!isPostgres(ds)) {
      // the group's transaction was committed, not left open (the read above holds its own until the next turn)
      await new Promise((resolve) => setImmediate(resolve));
      const conn = (ds.driver as unknown as { databaseConnection: { inTransaction: boolean } }).databaseConnection;
      expect(conn.inTransaction).toBe(false);
    }
  });

  it('a write resolves only once it is readable, and RETURNING rows come back to their own caller', async () => {
    await using t = await startTestServer();
    const ds = t.rt.services.ds;
    const upsert = (who: string) =>
      sql<{ used: number }>(
        ds,
        'INSERT INTO "unit_usage" ("billingEntity", "period", "used") VALUES (?, ?, ?) ' +
          'ON CONFLICT ("billingEntity", "period") DO UPDATE SET "used" = "unit_usage"."used" + excluded."used" RETURNING "used"',
        [who, '2026-11', 1],
      );
    const [a1, b1, a2, b2, a3] = await Promise.all([upsert('a'), upsert('b'), upsert('a'), upsert('b'), upsert('a')]);
    const a = [a1, a2, a3].map((r) => Number(r.rows[0].used));
    const b = [b1, b2].map((r) => Number(r.rows[0].used));
    // each caller gets its own row back; on SQLite a group runs in the order its writes were issued, while
    // PostgreSQL runs them on separate pooled connections in no set order
    const ordered = (xs: number[]) => (isPostgres(ds) ? [...xs].sort((x, y) => x - y) : xs);
    expect(ordered(a)).toEqual([1, 2, 3]);
    expect(ordered(b)).toEqual([1, 2]);
    const read = await sql<{ used: number }>(ds, 'SELECT "used" FROM "unit_usage" WHERE "billingEntity" = ?', ['a']);
    expect(Number(read.rows[0].used)).toBe(3);
  });

  it('concurrent API calls each leave their audit row and their unit charge', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const n = 30;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(t, 'GET', '/v1/me', { key: w.key, headers: { 'X-Request-Id': `req_group_${i}` } }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const used = answers.map((a) => Number(a.headers.get('svc-api-units-used'))).sort((x, y) => x - y);
    expect(used).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const audited = (await listAudit(t.rt.services, { limit: 500 }))
      .map((r) => r.requestId)
      .filter((id) => id.startsWith('req_group_'));
    expect(audited.sort()).toEqual(Array.from({ length: n }, (_, i) => `req_group_${i}`).sort());
  });
});
