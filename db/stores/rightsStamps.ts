import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';

// What long-lived streams' rights rest on, read for many holders at once: raw statements on `sql()` over the
// tables of credentials, memberships and agent runs, each one `IN (…)` list per chunk of ids.

/** Ids in one statement at most. */
const CHUNK = 500;

async function rowsIn<T>(db: DataSource | EntityManager, text: string, ids: string[]): Promise<T[]> {
  const rows: T[] = [];
  const distinct = [...new Set(ids)];
  for (let i = 0; i < distinct.length; i += CHUNK) {
    const chunk = distinct.slice(i, i + CHUNK);
    rows.push(...(await sql<T>(db, text.replace('(?)', `(${chunk.map(() => '?').join(', ')})`), chunk)).rows);
  }
  return rows;
}

export const apiKeyRevocations = (db: DataSource | EntityManager, ids: string[]) =>
  rowsIn<{ id: string; revokedAt: string | null }>(
    db,
    'SELECT "id", "revokedAt" FROM "api_keys" WHERE "id" IN (?)',
    ids,
  );

export const tokenStandings = (db: DataSource | EntityManager, ids: string[]) =>
  rowsIn<{ id: string; revokedAt: string | null; expiresAt: string }>(
    db,
    'SELECT "id", "revokedAt", "expiresAt" FROM "oauth_tokens" WHERE "id" IN (?)',
    ids,
  );

export const rolesOfUsers = (db: DataSource | EntityManager, userIds: string[]) =>
  rowsIn<{ userId: string; organizationId: string; role: string }>(
    db,
    'SELECT "userId", "organizationId", "role" FROM "memberships" WHERE "userId" IN (?)',
    userIds,
  );

export const roomCountsOfUsers = (db: DataSource | EntityManager, userIds: string[]) =>
  rowsIn<{ userId: string; n: number | string }>(
    db,
    'SELECT "userId", COUNT(*) AS "n" FROM "room_members" WHERE "userId" IN (?) GROUP BY "userId"',
    userIds,
  );

export const runStatuses = (db: DataSource | EntityManager, ids: string[]) =>
  rowsIn<{ id: string; status: string }>(db, 'SELECT "id", "status" FROM "agent_runs" WHERE "id" IN (?)', ids);
