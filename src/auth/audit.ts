import type { AuditEntry } from '../../db/entities/index.js';
import { isDatabaseUnavailableError } from '../../db/databaseErrors.js';
import type { SqlRun } from '../../db/sql.js';
import {
  auditRows,
  auditRowValues,
  deleteAuditBefore,
  insertAuditRow,
  insertAuditRowIn,
} from '../../db/stores/audit.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { auditRow } from '../http/auditRow.js';
import type { AuditInput, ErrorMapping, ProcedureMeta, RequestContext } from '../contract.js';
import { annotateActiveSpan } from '../observability/tracing.js';

/** Audit retention: 7 years. */
export const AUDIT_RETENTION_YEARS = 7;

/**
 * Appends one audit row, committed before the response is sent. Callers pass only the listed
 * fields; never a secret. One prepared statement (every request writes one: the ORM's insert builder cost
 * more than the write itself); `scopes` is JSON text as the entity's JsonColumn stores it.
 */
export async function writeAudit(s: Services, row: AuditInput): Promise<void> {
  noteAudited(s, row);
  await insertAudit(s, auditValues(s, row));
}

/** The row counted in the metrics and named on the request's span. */
function noteAudited(s: Services, row: AuditInput): void {
  s.metrics?.audited(row.surface, row.errorCode, row.units);
  annotateActiveSpan({ 'svc.request_id': row.requestId, 'svc.actor': row.actor ?? 'anonymous' });
}

/** The row's values in the store's column order, its id and time taken now (when the request was answered). */
function auditValues(s: Services, row: AuditInput): unknown[] {
  const now = s.now();
  return auditRowValues({
    ...row,
    id: newId('aud', now.getTime()),
    scopes: JSON.stringify(row.scopes),
    createdAt: iso(now),
    agentRunId: row.agentRunId,
  });
}

const insertAudit = (s: Services, values: unknown[]) => insertAuditRow(s.ds, values);

export interface AuditQuery {
  since?: string;
  actor?: 'user' | 'app' | 'agent';
  /** Only the requests made for this agent run (its delegated token's). */
  agentRunId?: string;
  limit?: number;
}

/** Newest first, for operators (`svc audit list`). */
export async function listAudit(s: Services, q: AuditQuery): Promise<AuditEntry[]> {
  return auditRows(s.ds, { since: q.since, actor: q.actor, agentRunId: q.agentRunId }, q.limit ?? 100);
}

/** A user's own requests (their keys, and the apps and agents acting for them), newest first. */
export const recentAuditOfUser = (s: Services, userId: string, limit: number): Promise<AuditEntry[]> =>
  auditRows(s.ds, { userId }, limit);

/** Deletes rows older than `before` (default: 7 years ago). */
export async function purgeAudit(s: Services, before?: Date): Promise<number> {
  const now = s.now();
  const cutoff =
    before ?? new Date(Date.UTC(now.getUTCFullYear() - AUDIT_RETENTION_YEARS, now.getUTCMonth(), now.getUTCDate()));
  return deleteAuditBefore(s.ds, iso(cutoff));
}

export type { AuditEntry };

/** Most audit rows kept in memory while the database cannot take them; past it, new rows are dropped and counted. */
export const AUDIT_BACKLOG_MAX = 50_000;
const AUDIT_RETRY_MS = 1000;

/**
 * Audit rows the database could not take (it was away), kept in memory in their order and written, oldest
 * first, once it takes them again: retried every second, and before any newer row, so the log keeps the
 * order of the answers. Bounded by AUDIT_BACKLOG_MAX; a row past it is dropped and counted
 * (`svc_audit_rows_dropped_total`), as is a row the database refuses for another reason than being away. Rows
 * still kept when the process ends are lost.
 */
class AuditBacklog {
  readonly rows: Array<{ values: unknown[]; requestId: string }> = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(readonly s: Services) {}

  #drop(requestId: string, err?: unknown): void {
    this.s.metrics?.auditDropped();
    this.s.log.error({ err, requestId }, 'audit row dropped');
  }

  keep(values: unknown[], requestId: string): void {
    if (this.rows.length >= AUDIT_BACKLOG_MAX) return this.#drop(requestId);
    this.rows.push({ values, requestId });
    this.s.metrics?.auditPending(this.rows.length);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer || this.rows.length === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush().then(
        () => this.#schedule(),
        () => this.#schedule(),
      );
    }, AUDIT_RETRY_MS);
    this.#timer.unref();
  }

  /** Writes the kept rows in order; stops at the first the database refuses (they stay, in order). */
  flush(): Promise<void> {
    return (this.#flushing ??= (async () => {
      try {
        while (this.rows.length && this.s.ds.isInitialized) {
          await insertAudit(this.s, this.rows[0].values);
          this.rows.shift();
          this.s.metrics?.auditPending(this.rows.length);
        }
      } catch (err) {
        // still away: the next round tries again; a row refused for another reason would block the rest
        if (!isDatabaseUnavailableError(err)) this.#drop(this.rows.shift()!.requestId, err);
      } finally {
        this.#flushing = undefined;
      }
    })());
  }
}

const backlogs = new WeakMap<Services, AuditBacklog>();

/** The audit rows kept in memory for `s` (0 when the database took every row). */
export const pendingAuditRows = (s: Services): number => backlogs.get(s)?.rows.length ?? 0;

/**
 * Writes an audit row where the row must never become the caller's failure (every answer of the API). A row
 * the database cannot take is kept and written later (`AuditBacklog`), and the answer goes out as it was.
 */
export async function recordAudit(s: Services, row: AuditInput): Promise<void> {
  noteAudited(s, row);
  const values = auditValues(s, row);
  const backlog = backlogs.get(s);
  if (backlog?.rows.length) {
    // older rows are waiting: this one goes behind them, and they are tried now
    backlog.keep(values, row.requestId);
    await backlog.flush();
    return;
  }
  try {
    await insertAudit(s, values);
  } catch (err) {
    auditFailed(s, values, row.requestId, err);
  }
}

/** A row the database refused: kept for later when it was away (AuditBacklog), else dropped; logged either way. */
function auditFailed(s: Services, values: unknown[], requestId: string, err: unknown): void {
  if (!isDatabaseUnavailableError(err)) {
    s.metrics?.auditDropped();
    s.log.error({ err, requestId }, 'audit write failed; the row is dropped');
    return;
  }
  s.log.error({ err, requestId }, 'audit write failed; the row is kept and written later');
  let b = backlogs.get(s);
  if (!b) backlogs.set(s, (b = new AuditBacklog(s)));
  b.keep(values, requestId);
}

/**
 * `recordAudit` inside a group's work (db/sql.ts `sqliteGroupWork`: a read's count, charge and row in one commit),
 * when no older row waits in memory (else undefined: the caller records the row after, behind them). Returns what
 * to do once the group is committed, back in the request's own context: count the row in the metrics and name it on
 * the request's span (the group runs in no request's context), and keep or drop a row the database refused, as
 * `recordAudit` does.
 */
export function recordAuditIn(run: SqlRun, s: Services, row: AuditInput): (() => void) | undefined {
  if (pendingAuditRows(s) > 0) return undefined;
  const values = auditValues(s, row);
  try {
    insertAuditRowIn(run, values);
    return () => noteAudited(s, row);
  } catch (err) {
    return () => {
      noteAudited(s, row);
      auditFailed(s, values, row.requestId, err);
    };
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
  await recordAudit(ctx.services, callRow(ctx, meta, outcome, toError));
}

/** The audit row of a procedure call: the status and error code its answer goes out with, the units it spent. */
export function callRow(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  outcome: { ok: true } | { ok: false; error: unknown },
  toError: ErrorMapping,
): AuditInput {
  const error = outcome.ok ? undefined : toError(outcome.error);
  const statusCode = error ? error.status : (ctx.out.status ?? meta?.http.successStatus ?? 200);
  return auditRow(
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
  );
}
