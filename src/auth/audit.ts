import { LessThan, MoreThanOrEqual, type FindOptionsWhere } from 'typeorm';
import { AuditEntry } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { auditRow } from '../http/auditRow.js';
import type { AuditInput, ErrorMapping, ProcedureMeta, RequestContext } from '../contract.js';
import { annotateActiveSpan } from '../observability/tracing.js';

/** Audit retention: 7 years. */
export const AUDIT_RETENTION_YEARS = 7;

const AUDIT_INSERT =
  'INSERT INTO "audit_log" ("id", "requestId", "surface", "method", "routePattern", "statusCode", "authMethod", "actor", ' +
  '"delegatingUserId", "scopes", "organizationId", "userId", "apiKeyId", "tokenId", "units", "errorCode", "createdAt", "agentRunId") ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Appends one audit row, committed before the response is sent. Callers pass only the listed
 * fields; never a secret. One prepared statement (every request writes one: the ORM's insert builder cost
 * more than the write itself); `scopes` is JSON text as the entity's JsonColumn stores it.
 */
export async function writeAudit(s: Services, row: AuditInput): Promise<void> {
  const now = s.now();
  s.metrics?.audited(row.surface, row.errorCode, row.units);
  annotateActiveSpan({ 'svc.request_id': row.requestId, 'svc.actor': row.actor ?? 'anonymous' });
  await sql(
    s.ds,
    AUDIT_INSERT,
    [
      newId('aud', now.getTime()),
      row.requestId,
      row.surface,
      row.method,
      row.routePattern,
      row.statusCode,
      row.authMethod,
      row.actor,
      row.delegatingUserId,
      JSON.stringify(row.scopes),
      row.organizationId,
      row.userId,
      row.apiKeyId,
      row.tokenId,
      row.units,
      row.errorCode,
      iso(now),
      row.agentRunId,
    ].map((v) => v ?? null),
  );
}

export interface AuditQuery {
  since?: string;
  actor?: 'user' | 'app' | 'agent';
  /** Only the requests made for this agent run (its delegated token's). */
  agentRunId?: string;
  limit?: number;
}

/** Newest first, for operators (`svc audit list`). */
export async function listAudit(s: Services, q: AuditQuery): Promise<AuditEntry[]> {
  const where: FindOptionsWhere<AuditEntry> = {};
  if (q.since) where.createdAt = MoreThanOrEqual(q.since);
  if (q.actor) where.actor = q.actor;
  if (q.agentRunId) where.agentRunId = q.agentRunId;
  return s.ds.getRepository(AuditEntry).find({ where, order: { createdAt: 'DESC', id: 'DESC' }, take: q.limit ?? 100 });
}

/** Deletes rows older than `before` (default: 7 years ago). */
export async function purgeAudit(s: Services, before?: Date): Promise<number> {
  const now = s.now();
  const cutoff =
    before ?? new Date(Date.UTC(now.getUTCFullYear() - AUDIT_RETENTION_YEARS, now.getUTCMonth(), now.getUTCDate()));
  const r = await s.ds.getRepository(AuditEntry).delete({ createdAt: LessThan(iso(cutoff)) });
  return r.affected ?? 0;
}

/**
 * Writes an audit row where the row must never become the caller's failure (every answer of the API): a
 * failed write is logged with the request id, and the answer goes out as it was.
 */
export async function recordAudit(s: Services, row: AuditInput): Promise<void> {
  try {
    await writeAudit(s, row);
  } catch (err) {
    s.log.error({ err, requestId: row.requestId }, 'audit write failed');
  }
}

/**
 * The pipeline's audit step: one row per procedure call, success or failure, with the status
 * the answer goes out with, written after everything else. A failed write is logged, never the caller's failure.
 */
export async function auditCall(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  outcome: { ok: true } | { ok: false; error: unknown },
  toError: ErrorMapping,
): Promise<void> {
  const error = outcome.ok ? undefined : toError(outcome.error);
  const statusCode = error ? error.status : (ctx.out.status ?? meta?.http.successStatus ?? 200);
  await recordAudit(
    ctx.services,
    auditRow(
      {
        requestId: ctx.requestId,
        surface: ctx.surface,
        method: ctx.method,
        routePattern: ctx.routePattern,
        statusCode,
        units: ctx.out.units,
        errorCode: error?.code ?? null,
      },
      ctx.out.actor,
    ),
  );
}
