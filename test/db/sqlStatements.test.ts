import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { isPostgres, sql } from '../../db/sql.js';
import { startTestServer } from '../helpers/harness.js';

// db/sql.ts keeps its statements: prepared once per connection (SQLite), named prepared statements parsed once per
// pooled connection (PostgreSQL). What a kept statement must never change: its answers, and the connection's use
// after one of its runs failed.
describe('sql(): kept statements', () => {
  it('a statement whose run failed runs again on the same connections, and answers as before', async () => {
    await using t = await startTestServer();
    const { ds } = t.rt;
    const insert = 'INSERT INTO "settings" ("key", "value") VALUES (?, ?)';
    await sql(ds, insert, ['kept-1', 'a']);
    // the same text again, failing (the key exists): refused with the database's own code, nothing written
    const dup = await sql(ds, insert, ['kept-1', 'b']).then(
      () => null,
      (e: { code?: string; driverError?: { code?: string } }) => e,
    );
    expect(dup?.code ?? dup?.driverError?.code).toMatch(/^(23505|SQLITE_CONSTRAINT_PRIMARYKEY)$/);
    // and then on every pooled connection (a burst takes several of them at once on PostgreSQL)
    await Promise.all(Array.from({ length: 12 }, (_, i) => sql(ds, insert, [`kept-${i + 2}`, String(i)])));
    const rows = (
      await sql<{ key: string; value: string }>(
        ds,
        'SELECT "key", "value" FROM "settings" WHERE "key" LIKE ? ORDER BY "key"',
        ['kept-%'],
      )
    ).rows;
    expect(rows.length).toBe(13);
    expect(rows.find((r) => r.key === 'kept-1')?.value).toBe('a');

    // inside a transaction: a failed statement takes the transaction down (PostgreSQL) or not (SQLite), and the
    // same texts run in the next one
    await expect(
      inTransaction(t.rt.services, async (m) => {
        await sql(m, insert, ['kept-in', 'x']);
        await sql(m, insert, ['kept-1', 'y']);
      }),
    ).rejects.toThrow();
    await inTransaction(t.rt.services, async (m) => {
      await sql(m, insert, ['kept-in', 'z']);
      expect(
        (await sql<{ value: string }>(m, 'SELECT "value" FROM "settings" WHERE "key" = ?', ['kept-in'])).rows,
      ).toEqual([{ value: 'z' }]);
    });
  });

  it('on PostgreSQL the statements are named once per connection and capped; on SQLite they are prepared once', async () => {
    await using t = await startTestServer();
    const { ds } = t.rt;
    const statementsOf = (m: Parameters<typeof sql>[0]) =>
      sql<{ name: string; statement: string }>(m, 'SELECT "name", "statement" FROM pg_prepared_statements', []).then(
        (r) => r.rows,
      );
    await inTransaction(t.rt.services, async (m) => {
      for (let run = 0; run < 3; run++) await sql(m, 'SELECT "key" FROM "settings" WHERE "key" = ?', ['none']);
      if (!isPostgres(ds)) return;
      // this connection's prepared statements: the one above once, by name
      const named = await statementsOf(m);
      expect(
        named.filter((s) => s.statement === 'SELECT "key" FROM "settings" WHERE "key" = $1').map((s) => s.name),
      ).toEqual([expect.stringMatching(/^svc_\d+$/)]);
    });
    // 520 distinct texts more (the process names 500 at most): every one answers, on one connection of the pool
    await inTransaction(t.rt.services, async (m) => {
      for (let i = 0; i < 520; i++) {
        expect(
          (await sql<{ n: number | string }>(m, `SELECT ? AS "n" /* ${i} */`, [i])).rows.map((r) => Number(r.n)),
        ).toEqual([i]);
      }
      if (!isPostgres(ds)) return;
      const named = await statementsOf(m);
      expect(named.filter((s) => s.statement.startsWith('SELECT $1 AS "n"')).length).toBeGreaterThan(400);
      expect(named.filter((s) => s.name.startsWith('svc_')).length).toBeLessThanOrEqual(500);
    });
  });
});
