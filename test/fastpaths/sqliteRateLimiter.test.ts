import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { RateLimiterRes, RateLimiterSQLite } from 'rate-limiter-flexible';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../db/dataSource.js';
import { RATE_WINDOW_SECONDS, type RateLimitResult } from '../../src/auth/rateLimit.js';
import { createSqliteRateLimiter } from '../../src/fastpaths/sqliteRateLimiter.js';
import { typeormDriverAccess } from '../../src/fastpaths/typeormDriver.js';

// src/fastpaths/sqliteRateLimiter.ts runs rate-limiter-flexible's RateLimiterSQLite statement itself; on the same
// requests at the same instants it must count, refuse and store exactly as the library's own limiter does.

afterEach(() => {
  vi.useRealTimers();
});

/** The library's limiter for `limit` points per window, on its own database, as rateLimit.ts configures it. */
function libraryLimiter(db: Database.Database, limit: number): Promise<RateLimiterSQLite> {
  return new Promise((resolve, reject) => {
    const l: RateLimiterSQLite = new RateLimiterSQLite(
      {
        storeClient: db,
        storeType: 'better-sqlite3',
        tableName: 'rate_limits',
        points: limit,
        duration: RATE_WINDOW_SECONDS,
        keyPrefix: `rl${limit}`,
        clearExpiredByTimeout: false,
      },
      (err?: unknown) => queueMicrotask(() => (err ? reject(err as Error) : resolve(l))),
    );
  });
}

/** The library's answer in the shape of `RateLimiter.consume` (the mapping rateLimit.ts makes on PostgreSQL). */
async function libraryConsume(l: RateLimiterSQLite, subject: string, limit: number): Promise<RateLimitResult> {
  try {
    const r = await l.consume(subject, 1);
    return { allowed: true, limit, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)) };
  }
}

describe('the SQLite rate limiter counts as RateLimiterSQLite does', () => {
  it('same answers and same rows over windows that start, fill, refuse and roll over', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-rl-'));
    const ds = await openDatabase(
      { database: { kind: 'sqlite', file: path.join(dir, 'svc.sqlite') } },
      { driver: typeormDriverAccess },
    );
    const libDb = new Database(':memory:');
    try {
      vi.useFakeTimers({ toFake: ['Date'] });
      const t0 = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
      const ours = createSqliteRateLimiter(ds, RATE_WINDOW_SECONDS);
      const theirs = new Map<number, RateLimiterSQLite>();
      // [ms after t0, subject, limit]
      const steps: [number, string, number][] = [
        [0, 'key_a', 3],
        [1_000, 'key_a', 3],
        [1_400, 'key_a', 3],
        [2_000, 'key_a', 3],
        [2_001, 'key_b', 3],
        [30_500, 'key_a', 3],
        [59_999, 'key_a', 3],
        [60_000, 'key_a', 3],
        [60_001, 'key_a', 3],
        [60_002, 'key_a', 5],
        [61_000, 'key_b', 3],
        [119_999, 'key_a', 3],
        [120_000, 'key_a', 3],
        [120_000, 'key_a', 1],
        [120_000, 'key_a', 1],
        [500_000, 'key_b', 3],
      ];
      for (const [at, subject, limit] of steps) {
        vi.setSystemTime(t0 + at);
        if (!theirs.has(limit)) theirs.set(limit, await libraryLimiter(libDb, limit));
        const expected = await libraryConsume(theirs.get(limit)!, subject, limit);
        const got = await ours.consume(subject, limit);
        expect(got, `${subject} limit ${limit} at +${at} ms`).toEqual(expected);
      }
      const rows = (await ds.query('SELECT "key", "points", "expire" FROM "rate_limits" ORDER BY "key"')) as unknown[];
      const libRows = libDb.prepare('SELECT key, points, expire FROM rate_limits ORDER BY key').all();
      expect(rows.length).toBe(4);
      expect(rows.map((r) => ({ ...(r as object) }))).toEqual(libRows.map((r) => ({ ...(r as object) })));
    } finally {
      vi.useRealTimers();
      libDb.close();
      await ds.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
