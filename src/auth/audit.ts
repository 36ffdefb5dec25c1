import { LessThan, MoreThanOrEqual, type FindOptionsWhere } from 'typeorm';
import { AuditEntry } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { annotateActiveSpan } from '../observability/tracing.js';

/** Audit retention (spec 5.7, 8): 7 years. */
export const AUDIT_RETENTION_YEARS = 7;

export type AuditInput = Omit<AuditEntry, 'id' | 'createdAt'>;

const AUDIT_INSERT =
  'INSERT INTO "audit_log" ("id", "requestId", "surface", "method", "routePattern", "statusCode", "authMethod", "actor", ' +
  '"delegatingUserId", "scopes", "organizationId", "userId", "apiKeyId", "tokenId", "units", "errorCode", "createdAt") ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Appends one audit row (spec 5.7), committed before the response is sent. Callers pass only the listed
 * fields; never a secret. One prepared statement (every request writes one: the ORM's insert builder cost
 * more than the write itself); `scopes` is JSON text as the entity's JsonColumn stores it.
 */
export async function writeAudit(s: Services, row: AuditInput): Promise<void> {
  const now = s.now();
  s.metrics?.audited(row.surface, row.errorCode, row.units);
  annotateActiveSpan({ 'svc.request_id': row.requestId, 'svc.actor': row.actor ?? 'anonymous' });
  await sql(s.ds, AUDIT_INSERT, [
    newId('aud', now.getTime()), row.requestId, row.surface, row.method, row.routePattern, row.statusCode, row.authMethod, row.actor,
    row.delegatingUserId, JSON.stringify(row.scopes), row.organizationId, row.userId, row.apiKeyId, row.tokenId, row.units,
    row.errorCode, iso(now),
  ].map((v) => v ?? null));
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
