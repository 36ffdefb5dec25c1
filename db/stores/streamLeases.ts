import type { DataSource, EntityManager } from 'typeorm';
import { isPostgres, sql } from '../sql.js';

// Leases of long-lived streams (`mcp_stream_leases`): raw statements on `sql()`, since the count of live leases
// per credential, person and organization is one aggregate statement, and PostgreSQL serialises the takers with
// advisory locks.

/** The lease's owner: its credential, person and organization. */
export interface LeaseOwner {
  credential: string;
  userId: string;
  organizationId: string | null;
}

const LEASE_COLUMNS = ['id', 'credential', 'userId', 'organizationId', 'expiresAt'] as const;
const INSERT_LEASE =
  `INSERT INTO "mcp_stream_leases" (${LEASE_COLUMNS.map((c) => `"${c}"`).join(', ')}) ` +
  `VALUES (${LEASE_COLUMNS.map(() => '?').join(', ')})`;
/** A lease is the owner's when it shares its credential, person or organization. */
const MINE = '("credential" = ? OR "userId" = ? OR "organizationId" = ?)';
const ownerParams = (o: LeaseOwner) => [o.credential, o.userId, o.organizationId ?? ''];

/**
 * On PostgreSQL, serialises the takers of one organization and one person within the transaction `m`, the
 * organization's lock first; SQLite's transactions hold the write lock from their start already.
 */
export async function lockLeaseOwner(m: EntityManager, owner: LeaseOwner): Promise<void> {
  if (!isPostgres(m.connection)) return;
  if (owner.organizationId) await sql(m, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`org:${owner.organizationId}`]);
  await sql(m, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`usr:${owner.userId}`]);
}

/** Deletes the owner's leases that expired before `now`. */
export async function deleteExpiredLeases(m: EntityManager, owner: LeaseOwner, now: string): Promise<void> {
  await sql(m, `DELETE FROM "mcp_stream_leases" WHERE ${MINE} AND "expiresAt" < ?`, [...ownerParams(owner), now]);
}

/** How many leases the owner's credential, person and organization hold. */
export async function countLeases(m: EntityManager, owner: LeaseOwner) {
  const params = ownerParams(owner);
  const live = (
    await sql<{ c: number | string | null; u: number | string | null; o: number | string | null }>(
      m,
      'SELECT SUM(CASE WHEN "credential" = ? THEN 1 ELSE 0 END) AS "c", ' +
        'SUM(CASE WHEN "userId" = ? THEN 1 ELSE 0 END) AS "u", ' +
        `SUM(CASE WHEN "organizationId" = ? THEN 1 ELSE 0 END) AS "o" FROM "mcp_stream_leases" WHERE ${MINE}`,
      [...params, ...params],
    )
  ).rows[0];
  return { credential: Number(live.c ?? 0), user: Number(live.u ?? 0), organization: Number(live.o ?? 0) };
}

export async function insertLease(m: EntityManager, id: string, owner: LeaseOwner, expiresAt: string) {
  await sql(m, INSERT_LEASE, [id, owner.credential, owner.userId, owner.organizationId, expiresAt]);
}

export async function renewLease(ds: DataSource, id: string, expiresAt: string): Promise<void> {
  await sql(ds, 'UPDATE "mcp_stream_leases" SET "expiresAt" = ? WHERE "id" = ?', [expiresAt, id]);
}

export async function deleteLease(ds: DataSource, id: string): Promise<void> {
  await sql(ds, 'DELETE FROM "mcp_stream_leases" WHERE "id" = ?', [id]);
}
