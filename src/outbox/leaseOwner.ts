import { randomUUID } from 'node:crypto';
import os from 'node:os';

/**
 * The lease owner id of one outbox worker: `<host>:<pid>:[<kind>:]<8 hex>`, unique among the workers of
 * every process sharing the database, and readable in a row's `leaseOwner` column.
 */
export const newLeaseOwner = (kind?: string): string =>
  `${os.hostname()}:${process.pid}:${kind ? `${kind}:` : ''}${randomUUID().slice(0, 8)}`;
