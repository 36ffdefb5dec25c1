import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Setting } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import { sqliteConnectionOf } from '../../db/sqliteGroup.js';
import { inTransaction } from '../../db/transaction.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// On SQLite the reads `sql()` runs outside a transaction share one read transaction until the loop's next check
// phase (db/sqliteHeldRead.ts). It must never be seen: a write, a transaction, a pragma run right after a read
// behave as before; this process's writes are read back at once; another process's commit is seen from the
// next turn on (a key revoked by the operator CLI is refused on the next request).

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const readSetting = async (ds: Parameters<typeof sql>[0], key: string) =>
  (await sql<{ value: string }>(ds, 'SELECT "value" FROM "settings" WHERE "key" = ?', [key])).rows[0]?.value;

describe('the reads of a turn share one read transaction (SQLite)', () => {
  it('holds reads only: it has ended by the next turn, and nothing that writes or begins a transaction sees it', async () => {
    await using t = await startTestServer();
    const ds = t.rt.services.ds;
    const conn = sqliteConnectionOf(ds);
    if (!conn) return; // PostgreSQL: every read is a statement of its pool
    expect(await readSetting(ds, 'held-1')).toBeUndefined();
    expect(conn.inTransaction).toBe(true); // the turn's read transaction
    await nextTurn();
    expect(conn.inTransaction).toBe(false);

    // a write right after a read: grouped and committed as before, and read back at once
    await readSetting(ds, 'held-1');
    await sql(ds, 'INSERT INTO "settings" ("key", "value") VALUES (?, ?)', ['held-1', 'a']);
    expect(await readSetting(ds, 'held-1')).toBe('a');
    // a transaction right after a read (BEGIN IMMEDIATE on the same connection)
    await readSetting(ds, 'held-2');
    await inTransaction(t.rt.services, (m) => m.insert(Setting, { key: 'held-2', value: 'b' }));
    expect(await readSetting(ds, 'held-2')).toBe('b');
    // the ORM's own write outside a transaction (it begins one of its own)
    await readSetting(ds, 'held-3');
    await ds.manager.save(Setting, { key: 'held-3', value: 'c' });
    expect(await readSetting(ds, 'held-3')).toBe('c');
    // a pragma right after a read: a checkpoint is not held back by this process's own snapshot
    await readSetting(ds, 'held-3');
    const [checkpoint] = (conn as unknown as { pragma(s: string): { busy: number }[] }).pragma(
      'wal_checkpoint(TRUNCATE)',
    );
    expect(checkpoint.busy).toBe(0);
    await nextTurn();
    expect(conn.inTransaction).toBe(false);
  });

  it("another process's commit is read from the next turn on; a key revoked there is refused on the next request", async () => {
    await using t = await startTestServer();
    const ds = t.rt.services.ds;
    const conn = sqliteConnectionOf(ds);
    if (!conn) return;
    const other = new Database((conn as unknown as { name: string }).name);
    try {
      expect(await readSetting(ds, 'other-1')).toBeUndefined();
      other.prepare('INSERT INTO "settings" ("key", "value") VALUES (?, ?)').run('other-1', 'x');
      // within the turn the reads share the snapshot of its first read …
      expect(await readSetting(ds, 'other-1')).toBeUndefined();
      // … and from the next turn on they see the commit
      await nextTurn();
      expect(await readSetting(ds, 'other-1')).toBe('x');

      const w = await createWorld(t.rt);
      expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
      other.prepare('UPDATE "api_keys" SET "revokedAt" = ? WHERE "id" = ?').run(new Date().toISOString(), w.keyId);
      expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(401);
    } finally {
      other.close();
    }
  });
});
