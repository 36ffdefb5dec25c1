import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { afterCommit, inTransaction } from '../../db/transaction.js';
import { sql } from '../../db/sql.js';
import { sqliteConnectionOf, sqliteGroupStatements } from '../../db/sqliteGroup.js';
import { startTestServer } from '../helpers/harness.js';

// db/transaction.ts commits the SQLite transactions waiting in its queue together, each in a savepoint of
// its own. What each caller sees must not change: its writes are kept only if it succeeded, a
// failing one is undone alone, and a caller learns of success (and its after-commit hooks run) only once
// the COMMIT that made it durable has returned.

const insert = (key: string) => (m: Parameters<Parameters<typeof inTransaction>[1]>[0]) =>
  sql(m, 'INSERT INTO "settings" ("key", "value") VALUES (?, ?)', [key, 'v']);

describe('SQLite transactions committed in groups', () => {
  it('queued transactions share one COMMIT; a failing one is undone alone; each caller settles after the COMMIT', async () => {
    await using t = await startTestServer();
    const s = t.rt.services;
    if (s.ds.options.type === 'postgres') return; // PostgreSQL runs transactions concurrently, one commit each
    const conn = sqliteConnectionOf(s.ds)!;
    const stmts = sqliteGroupStatements(conn);
    const realCommit = stmts.commit;
    let commitCount = 0;
    stmts.commit = { run: () => (commitCount++, realCommit.run()) };
    const commits = () => commitCount;
    // another connection on the same file sees only what was committed
    const other = new Database((conn as unknown as { name: string }).name, { readonly: true });
    try {
      const seen: string[] = [];
      const calls = Array.from({ length: 10 }, (_, i) =>
        inTransaction(s, async (m) => {
          await insert(`grp-${i}`)(m);
          afterCommit(m, () => {
            const { n } = other.prepare('SELECT COUNT(*) AS "n" FROM "settings" WHERE "key" = ?').get(`grp-${i}`) as {
              n: number;
            };
            seen.push(`hook ${i}: ${n === 1 ? 'committed' : 'not committed'}`);
          });
          if (i === 4) throw new Error('member 4 fails');
          return i;
        }).then((v) => {
          // resolved only after its COMMIT: the other connection reads the row, and the hook ran before
          const row = other.prepare('SELECT "value" FROM "settings" WHERE "key" = ?').get(`grp-${i}`);
          expect(row).toEqual({ value: 'v' });
          expect(seen).toContain(`hook ${i}: committed`);
          return v;
        }),
      );
      const results = await Promise.allSettled(calls);
      expect(results.map((r) => r.status)).toEqual(
        Array.from({ length: 10 }, (_, i) => (i === 4 ? 'rejected' : 'fulfilled')),
      );
      expect((results[4] as PromiseRejectedResult).reason.message).toBe('member 4 fails');
      // the failing member's row was undone, every other kept
      const kept = other.prepare('SELECT "key" FROM "settings" WHERE "key" LIKE ? ORDER BY "key"').all('grp-%') as {
        key: string;
      }[];
      expect(kept.map((r) => r.key)).toEqual([
        'grp-0',
        'grp-1',
        'grp-2',
        'grp-3',
        'grp-5',
        'grp-6',
        'grp-7',
        'grp-8',
        'grp-9',
      ]);
      // the ten were queued together: fewer COMMITs than transactions, and none left open
      expect(commits()).toBeGreaterThan(0);
      expect(commits()).toBeLessThan(10);
      expect(conn.inTransaction).toBe(false);
      expect(seen.filter((x) => x.startsWith('hook 4'))).toEqual([]);

      // alone in the queue, a transaction commits at once
      const before = commits();
      await inTransaction(s, insert('grp-alone'));
      expect(commits()).toBe(before + 1);
      expect(other.prepare('SELECT "key" FROM "settings" WHERE "key" = ?').get('grp-alone')).toEqual({
        key: 'grp-alone',
      });
    } finally {
      other.close();
      stmts.commit = realCommit;
    }
  });

  it('a COMMIT that fails fails every member of its group, and keeps none of them', async () => {
    await using t = await startTestServer();
    const s = t.rt.services;
    if (s.ds.options.type === 'postgres') return;
    const stmts = sqliteGroupStatements(sqliteConnectionOf(s.ds)!);
    const real = stmts.commit;
    const refused = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    stmts.commit = {
      run: () => {
        throw refused;
      },
    };
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 3 }, (_, i) => inTransaction(s, insert(`lost-${i}`))),
      );
      expect(results.every((r) => r.status === 'rejected' && r.reason === refused)).toBe(true);
    } finally {
      stmts.commit = real;
    }
    const kept = await sql<{ key: string }>(s.ds, 'SELECT "key" FROM "settings" WHERE "key" LIKE ?', ['lost-%']);
    expect(kept.rows).toEqual([]);
    // the connection is usable again
    await inTransaction(s, insert('after-lost'));
    expect((await sql(s.ds, 'SELECT "key" FROM "settings" WHERE "key" = ?', ['after-lost'])).rows).toHaveLength(1);
  });
});
