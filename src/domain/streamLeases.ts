import { inTransaction } from '../../db/transaction.js';
import { isPostgres, sql } from '../../db/sql.js';
import { newId } from './ids.js';
import type { Services } from './services.js';
import { iso } from './time.js';

/**
 * Leases of long-lived streams (MCP subscriptions), one row each in `mcp_stream_leases`: a cap per credential
 * counts the live rows of every process on the database, not only this one's. A lease lives `ttlMs` past its
 * last renewal, so the rows of a process that died stop counting on their own.
 */
export interface StreamLeases {
  /** A new lease for `credential`, or null when it already holds `max` live ones. */
  take(credential: string, max: number): Promise<string | null>;
  renew(id: string): Promise<void>;
  drop(id: string): Promise<void>;
}

export function streamLeases(services: Services, ttlMs: number): StreamLeases {
  const expiry = () => iso(new Date(services.now().getTime() + ttlMs));
  return {
    take: (credential, max) =>
      inTransaction(services, async (m) => {
        const now = iso(services.now());
        // PostgreSQL runs two processes' transactions side by side: one credential's count and insert are
        // serialised by a lock on the credential (SQLite transactions take the write lock when they begin)
        if (isPostgres(services.ds)) await sql(m, 'SELECT pg_advisory_xact_lock(hashtext(?))', [credential]);
        await sql(m, 'DELETE FROM "mcp_stream_leases" WHERE "credential" = ? AND "expiresAt" < ?', [credential, now]);
        const live = await sql<{ n: number | string }>(
          m,
          'SELECT COUNT(*) AS "n" FROM "mcp_stream_leases" WHERE "credential" = ?',
          [credential],
        );
        if (Number(live.rows[0].n) >= max) return null;
        const id = newId('lease');
        await sql(m, 'INSERT INTO "mcp_stream_leases" ("id", "credential", "expiresAt") VALUES (?, ?, ?)', [
          id,
          credential,
          expiry(),
        ]);
        return id;
      }),
    async renew(id) {
      await sql(services.ds, 'UPDATE "mcp_stream_leases" SET "expiresAt" = ? WHERE "id" = ?', [expiry(), id]);
    },
    async drop(id) {
      await sql(services.ds, 'DELETE FROM "mcp_stream_leases" WHERE "id" = ?', [id]);
    },
  };
}
