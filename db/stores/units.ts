import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';

// The monthly unit ledger (`unit_usage`): one row per billing entity and UTC month. Raw statements on `sql()`:
// every request charges, so each is one prepared statement, and outside a transaction the charge joins SQLite's
// group commit with the pipeline's other writes.

/** A condition the charge must meet when it runs (the rate limit's count, committed with the charge). */
export interface ChargeCondition {
  sql: string;
  params: unknown[];
}

const CHARGE_INSERT = 'INSERT INTO "unit_usage" ("billingEntity", "period", "used")';
const CHARGE_UPSERT =
  'ON CONFLICT ("billingEntity", "period") DO UPDATE SET "used" = "unit_usage"."used" + excluded."used" ' +
  'WHERE "unit_usage"."used" + excluded."used" <= ? RETURNING "used"';
const CHARGE = `${CHARGE_INSERT} VALUES (?, ?, ?) ${CHARGE_UPSERT}`;
const USED = 'SELECT "used" FROM "unit_usage" WHERE "billingEntity" = ? AND "period" = ?';
const REFUND = 'UPDATE "unit_usage" SET "used" = "used" - ? WHERE "billingEntity" = ? AND "period" = ? AND "used" >= ?';

/**
 * Adds `cost` to the period's count in one upsert that only updates while the sum stays within `limit`
 * (and `onlyIf` holds): the new count, or null when nothing was charged.
 */
export async function chargeUnitUsage(
  db: DataSource | EntityManager,
  billingEntity: string,
  period: string,
  cost: number,
  limit: number,
  onlyIf?: ChargeCondition,
): Promise<number | null> {
  const r = await sql<{ used: number | string }>(
    db,
    onlyIf ? `${CHARGE_INSERT} SELECT ?, ?, ? WHERE ${onlyIf.sql} ${CHARGE_UPSERT}` : CHARGE,
    onlyIf ? [billingEntity, period, cost, ...onlyIf.params, limit] : [billingEntity, period, cost, limit],
  );
  return r.rows.length ? Number(r.rows[0].used) : null;
}

/** The period's count (0 before the first charge). */
export async function unitUsage(db: DataSource | EntityManager, billingEntity: string, period: string) {
  const r = await sql<{ used: number | string }>(db, USED, [billingEntity, period]);
  return Number(r.rows[0]?.used ?? 0);
}

/** Takes `cost` off the period's count, never below zero. */
export async function refundUnitUsage(
  db: DataSource | EntityManager,
  billingEntity: string,
  period: string,
  cost: number,
): Promise<void> {
  await sql(db, REFUND, [cost, billingEntity, period, cost]);
}
