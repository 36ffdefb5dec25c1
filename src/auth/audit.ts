import { LessThan, MoreThanOrEqual, type FindOptionsWhere } from 'typeorm';
import { AuditEntry } from '../../db/entities/index.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';

/** Audit retention (spec 5.7, 8): 7 years. */
export const AUDIT_RETENTION_YEARS = 7;

export type AuditInput = Omit<AuditEntry, 'id' | 'createdAt'>;

/** Appends one audit row (spec 5.7). Callers pass only the listed fields; never a secret. */
export async function writeAudit(s: Services, row: AuditInput): Promise<void> {
  const now = s.now();
  await s.ds.getRepository(AuditEntry).insert({ ...row, id: newId('aud', now.getTime()), createdAt: iso(now) });
}

export interface AuditQuery {
  since?: string;
  actor?: 'user' | 'app' | 'agent';
  limit?: number;
}

/** Newest first, for operators (`svc audit list`). */
export async function listAudit(s: Services, q: AuditQuery): Promise<AuditEntry[]> {
  const where: FindOptionsWhere<AuditEntry> = {};
  if (q.since) where.createdAt = MoreThanOrEqual(q.since);
  if (q.actor) where.actor = q.actor;
  return s.ds.getRepository(AuditEntry).find({ where, order: { createdAt: 'DESC', id: 'DESC' }, take: q.limit ?? 100 });
}

/** Deletes rows older than `before` (default: 7 years ago). */
export async function purgeAudit(s: Services, before?: Date): Promise<number> {
  const now = s.now();
  const cutoff = before ?? new Date(Date.UTC(now.getUTCFullYear() - AUDIT_RETENTION_YEARS, now.getUTCMonth(), now.getUTCDate()));
  const r = await s.ds.getRepository(AuditEntry).delete({ createdAt: LessThan(iso(cutoff)) });
  return r.affected ?? 0;
}
