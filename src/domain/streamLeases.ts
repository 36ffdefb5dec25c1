import { inTransaction } from '../../db/transaction.js';
import { isPostgres, sql } from '../../db/sql.js';
import { newId } from './ids.js';
import type { Services } from './services.js';
import { iso } from './time.js';

/** Whose stream a lease is: the credential, the person it acts for, and the organization it acts in. */
export interface StreamOwner {
  credential: string;
  userId: string;
  organizationId: string | null;
}

/** The most live leases one credential, one person (all their credentials) and one organization may hold. */
export interface StreamCaps {
  credential: number;
  user: number;
  organization: number;
}

/** A lease, or the first cap it would pass. */
export type LeaseTaken = { id: string } | { refused: keyof StreamCaps; max: number };

/**
 * Leases of long-lived streams (MCP subscriptions), one row each in `mcp_stream_leases`: the caps per credential,
 * per person and per organization count the live rows of every process on the database, not only this one's. A
 * lease lives `ttlMs` past its last renewal, so the rows of a process that died stop counting on their own.
 */
export interface StreamLeases {
  /** A new lease for `owner`, or the cap it would pass. */
  take(owner: StreamOwner, caps: StreamCaps): Promise<LeaseTaken>;
  renew(id: string): Promise<void>;
  drop(id: string): Promise<void>;
}

export function streamLeases(services: Services, ttlMs: number): StreamLeases {
  const expiry = () => iso(new Date(services.now().getTime() + ttlMs));
  return {
    take: (owner, caps) =>
      inTransaction(services, async (m) => {
        const now = iso(services.now());
        const org = owner.organizationId;
        // PostgreSQL runs two processes' transactions side by side: the counts and the insert of one organization
        // and one person are serialised by locks on them, always the organization's first (SQLite transactions
        // take the write lock when they begin)
        if (isPostgres(services.ds)) {
          if (org) await sql(m, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`org:${org}`]);
          await sql(m, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`usr:${owner.userId}`]);
        }
        const mine = '("credential" = ? OR "userId" = ? OR "organizationId" = ?)';
        const params = [owner.credential, owner.userId, org ?? ''];
        await sql(m, `DELETE FROM "mcp_stream_leases" WHERE ${mine} AND "expiresAt" < ?`, [...params, now]);
        const live = (
          await sql<{ c: number | string | null; u: number | string | null; o: number | string | null }>(
            m,
            'SELECT SUM(CASE WHEN "credential" = ? THEN 1 ELSE 0 END) AS "c", ' +
              'SUM(CASE WHEN "userId" = ? THEN 1 ELSE 0 END) AS "u", ' +
              `SUM(CASE WHEN "organizationId" = ? THEN 1 ELSE 0 END) AS "o" FROM "mcp_stream_leases" WHERE ${mine}`,
            [...params, ...params],
          )
        ).rows[0];
        if (Number(live.c ?? 0) >= caps.credential) return { refused: 'credential', max: caps.credential };
        if (Number(live.u ?? 0) >= caps.user) return { refused: 'user', max: caps.user };
        if (org && Number(live.o ?? 0) >= caps.organization) return { refused: 'organization', max: caps.organization };
        const id = newId('lease');
        await sql(
          m,
          'INSERT INTO "mcp_stream_leases" ("id", "credential", "userId", "organizationId", "expiresAt") VALUES (?, ?, ?, ?, ?)',
          [id, owner.credential, owner.userId, org, expiry()],
        );
        return { id };
      }),
    async renew(id) {
      await sql(services.ds, 'UPDATE "mcp_stream_leases" SET "expiresAt" = ? WHERE "id" = ?', [expiry(), id]);
    },
    async drop(id) {
      await sql(services.ds, 'DELETE FROM "mcp_stream_leases" WHERE "id" = ?', [id]);
    },
  };
}
