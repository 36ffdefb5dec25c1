import { LessThan, MoreThanOrEqual, type DataSource, type EntityManager, type FindOptionsWhere } from 'typeorm';
import { AuditEntry } from '../entities/index.js';
import { sql, type SqlRun } from '../sql.js';

// The audit log (`audit_log`). Every request writes one row: a prepared statement on `sql()` (the ORM's insert
// builder cost more than the write itself), which outside a transaction joins SQLite's group commit. The reads
// and the purge, for operators and the settings page, use TypeORM's entity manager.

/** The columns of a row, in the order of AUDIT_INSERT's values. */
export const AUDIT_COLUMNS = [
  'id',
  'requestId',
  'surface',
  'method',
  'routePattern',
  'statusCode',
  'authMethod',
  'actor',
  'delegatingUserId',
  'scopes',
  'organizationId',
  'userId',
  'apiKeyId',
  'tokenId',
  'units',
  'errorCode',
  'createdAt',
  'agentRunId',
] as const satisfies readonly (keyof AuditEntry)[];

const AUDIT_INSERT =
  `INSERT INTO "audit_log" (${AUDIT_COLUMNS.map((c) => `"${c}"`).join(', ')}) ` +
  `VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`;

/** A row's values in AUDIT_COLUMNS' order (what `auditValues` makes of a row); `scopes` as JSON text. */
export const auditRowValues = (row: Record<(typeof AUDIT_COLUMNS)[number], unknown>): unknown[] =>
  AUDIT_COLUMNS.map((c) => row[c] ?? null);

/** Appends one row, its values in AUDIT_COLUMNS' order (auditRowValues). */
export const insertAuditRow = (db: DataSource | EntityManager, values: unknown[]) => sql(db, AUDIT_INSERT, values);

/** `insertAuditRow` inside a group's work (db/sql.ts `sqliteGroupWork`). */
export const insertAuditRowIn = (run: SqlRun, values: unknown[]): void => {
  run(AUDIT_INSERT, values);
};

export interface AuditFilter {
  since?: string;
  actor?: 'user' | 'app' | 'agent';
  agentRunId?: string;
  userId?: string;
}

const managerOf = (db: DataSource | EntityManager): EntityManager => ('connection' in db ? db : db.manager);

/** Rows matching `filter`, newest first, at most `limit`. */
export function auditRows(db: DataSource | EntityManager, filter: AuditFilter, limit: number): Promise<AuditEntry[]> {
  const where: FindOptionsWhere<AuditEntry> = {};
  if (filter.since) where.createdAt = MoreThanOrEqual(filter.since);
  if (filter.actor) where.actor = filter.actor;
  if (filter.agentRunId) where.agentRunId = filter.agentRunId;
  if (filter.userId) where.userId = filter.userId;
  return managerOf(db).find(AuditEntry, { where, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
}

/** Deletes the rows written before `cutoff`; how many. */
export async function deleteAuditBefore(db: DataSource | EntityManager, cutoff: string): Promise<number> {
  return (await managerOf(db).delete(AuditEntry, { createdAt: LessThan(cutoff) })).affected ?? 0;
}
