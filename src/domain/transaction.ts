import type { EntityManager } from 'typeorm';
import { inTransaction as inDatabaseTransaction } from '../../db/transaction.js';
import type { Services } from './services.js';

/**
 * Runs `work` in one transaction of the runtime's database (db/transaction.ts: retried when the database is
 * momentarily busy, as `services.transactionRetries` says): the door for the callers above the domain that hold
 * no database module of their own, the operator command line among them.
 */
export function inTransaction<T>(services: Services, work: (m: EntityManager) => Promise<T>): Promise<T> {
  return inDatabaseTransaction(services, work);
}
