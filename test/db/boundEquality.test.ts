import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LIMIT_PARAM, sqliteStatementText } from '../../db/sql.js';

// `sql()` gives SQLite each `= ?` as `= +?` (db/sql.ts, sqliteStatementText): SQLite does not look through the
// unary plus while planning, so a kept statement is not compiled again on every run. These hold the rewrite to
// what it claims: only equalities change, no parameter moves, and SQLite answers exactly as before.
describe('bound equalities on SQLite (`= ?` given as `= +?`)', () => {
  it('rewrites each equality with a parameter, and nothing else', () => {
    const text =
      'SELECT "id" FROM "t" WHERE "a" = ? AND "b" <= ? AND "c" >= ? AND "d" <> ? AND "e" != ? AND "f" IN (?, ?) ' +
      `AND "g" = 'x = y' ORDER BY "id" ${LIMIT_PARAM}`;
    const out = sqliteStatementText(text);
    expect(out).toBe(text.replace('"a" = ?', '"a" = +?'));
    expect(out.split('?').length).toBe(text.split('?').length);
    expect(sqliteStatementText('UPDATE "t" SET "x" = ?, "y" = ? WHERE "id" = ?')).toBe(
      'UPDATE "t" SET "x" = +?, "y" = +? WHERE "id" = +?',
    );
    expect(sqliteStatementText('SELECT 1')).toBe('SELECT 1');
  });

  it('selects, orders and updates exactly as the plain parameter does, for every kind of value against every column affinity', () => {
    const db = new Database(':memory:');
    try {
      db.exec(
        'CREATE TABLE "t" ("id" integer PRIMARY KEY, "txt" varchar(64), "num" integer, "real" real, "raw" blob, "any")',
      );
      db.exec('CREATE INDEX "t_txt_id" ON "t" ("txt", "id")');
      const insert = db.prepare('INSERT INTO "t" ("txt", "num", "real", "raw", "any") VALUES (?, ?, ?, ?, ?)');
      const values: unknown[] = ['5', 5, 5.0, '05', 0, 1, '0', 'room_A', Buffer.from('ab'), null, 1.5, '1.5', -1];
      for (const v of values) insert.run(v, v, v, v, v);
      for (const column of ['txt', 'num', 'real', 'raw', 'any']) {
        for (const v of values) {
          const plain = `SELECT "id" FROM "t" WHERE "${column}" = ? ORDER BY "id"`;
          expect(db.prepare(sqliteStatementText(plain)).all(v), `${column} = ${String(v)}`).toEqual(
            db.prepare(plain).all(v),
          );
        }
      }
      // an assignment stores the same value, with the column's affinity applied, as before
      const assign = 'UPDATE "t" SET "txt" = ?, "num" = ?, "real" = ?, "raw" = ? WHERE "id" = ?';
      db.prepare(assign).run(7, '8', '2.5', Buffer.from('cd'), 1);
      db.prepare(sqliteStatementText(assign)).run(7, '8', '2.5', Buffer.from('cd'), 2);
      const row = (id: number) =>
        db
          .prepare(
            'SELECT "txt", typeof("txt") AS t1, "num", typeof("num") AS t2, "real", "raw" FROM "t" WHERE "id" = ?',
          )
          .get(id);
      expect(row(2)).toEqual(row(1));
      expect(row(1)).toMatchObject({ t1: 'text', num: 8, t2: 'integer', real: 2.5 });
    } finally {
      db.close();
    }
  });
});
