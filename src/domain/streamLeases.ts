import { inTransaction } from '../../db/transaction.js';
import {
  countLeases,
  deleteExpiredLeases,
  deleteLease,
  insertLease,
  lockLeaseOwner,
  renewLease,
} from '../../db/stores/streamLeases.js';
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
        // PostgreSQL runs two processes' transactions side by side: the counts and the insert of one organization
        // and one person are serialised by locks on them, always the organization's first (SQLite transactions
        // take the write lock when they begin)
        await lockLeaseOwner(m, owner);
        await deleteExpiredLeases(m, owner, iso(services.now()));
        const live = await countLeases(m, owner);
        if (live.credential >= caps.credential) return { refused: 'credential', max: caps.credential };
        if (live.user >= caps.user) return { refused: 'user', max: caps.user };
        if (owner.organizationId && live.organization >= caps.organization)
          return { refused: 'organization', max: caps.organization };
        const id = newId('lease');
        await insertLease(m, id, owner, expiry());
        return { id };
      }),
    async renew(id) {
      await renewLease(services.ds, id, expiry());
    },
    async drop(id) {
      await deleteLease(services.ds, id);
    },
  };
}
