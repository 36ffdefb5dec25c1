import type { EntityManager } from 'typeorm';
import { Approval } from '../entities/index.js';
import { keysetEntities, type KeysetBounds } from './paging.js';

/** Approvals of records: through TypeORM's entity (its columns are the list), a few rows per record. */
export async function pendingApproval(m: EntityManager, recordId: string): Promise<Approval | null> {
  return m.findOneBy(Approval, { recordId, status: 'pending' });
}

export async function insertApproval(m: EntityManager, approval: Approval): Promise<Approval> {
  const row = m.create(Approval, approval);
  await m.insert(Approval, row);
  return row;
}

/** Writes the approval's fields as they are now. */
export async function saveApproval(m: EntityManager, approval: Approval): Promise<void> {
  await m.save(Approval, approval);
}

/** Marks the record's pending approval (if any) withdrawn, by `decidedById` at `decidedAt`. */
export async function withdrawPendingApproval(
  m: EntityManager,
  recordId: string,
  decidedById: string,
  decidedAt: string,
): Promise<void> {
  await m.update(Approval, { recordId, status: 'pending' }, { status: 'withdrawn', decidedById, decidedAt });
}

export async function deleteApprovalsOf(m: EntityManager, recordId: string): Promise<void> {
  await m.delete(Approval, { recordId });
}

/** A record's approvals, a keyset page in id order (oldest first). */
export async function approvalsPage(m: EntityManager, recordId: string, bounds: KeysetBounds): Promise<Approval[]> {
  const qb = m.getRepository(Approval).createQueryBuilder('x').where('x.recordId = :recordId', { recordId });
  return keysetEntities(qb, 'x.id', bounds);
}
