import type { DataSource, EntityManager } from 'typeorm';
import { sql, type SqlRun } from '../sql.js';

// The monthly unit ledger (`unit_usage`): one row per billing entity and UTC month. Raw statements on `sql()`:
// every request charges, so each is one prepared statement, and outside a transaction the charge joins SQLite's
// group commit with the pipeline's other writes.

const CHARGE =
  'INSERT INTO "unit_usage" ("billingEntity", "period", "used") VALUES (?, ?, ?) ' +
  'ON CONFLICT ("billingEntity", "period") DO UPDATE SET "used" = "unit_usage"."used" + excluded."used" ' +
  'WHERE "unit_usage"."used" + excluded."used" <= ? RETURNING "used"';
const USED = 'SELECT "used" FROM "unit_usage" WHERE "billingEntity" = ? AND "period" = ?';
const REFUND = 'UPDATE "unit_usage" SET "used" = "used" - ? WHERE "billingEntity" = ? AND "period" = ? AND "used" >= ?';

type UsedRows = { used: number | string }[];
const chargedOf = (rows: UsedRows): number | null => (rows.length ? Number(rows[0].used) : null);
const usedOf = (rows: UsedRows): number => Number(rows[0]?.used ?? 0);

/**
 * Adds `cost` to the period's count in one upsert that only updates while the sum stays within `limit`: the new
 * count, or null when nothing was charged.
 */
export async function chargeUnitUsage(
  db: DataSource | EntityManager,
  billingEntity: string,
  period: string,
  cost: number,
  limit: number,
): Promise<number | null> {
  return chargedOf((await sql<UsedRows[number]>(db, CHARGE, [billingEntity, period, cost, limit])).rows);
}

/** `chargeUnitUsage` inside a group's work (db/sql.ts `sqliteGroupWork`). */
export const chargeUnitUsageIn = (run: SqlRun, billingEntity: string, period: string, cost: number, limit: number) =>
  chargedOf(run<UsedRows[number]>(CHARGE, [billingEntity, period, cost, limit]).rows);

/** The period's count (0 before the first charge). */
export async function unitUsage(db: DataSource | EntityManager, billingEntity: string, period: string) {
  return usedOf((await sql<UsedRows[number]>(db, USED, [billingEntity, period])).rows);
}

/** `unitUsage` inside a group's work. */
export const unitUsageIn = (run: SqlRun, billingEntity: string, period: string) =>
  usedOf(run<UsedRows[number]>(USED, [billingEntity, period]).rows);

/** Takes `cost` off the period's count, never below zero. */
export async function refundUnitUsage(
  db: DataSource | EntityManager,
  billingEntity: string,
  period: string,
  cost: number,
): Promise<void> {
  await sql(db, REFUND, [cost, billingEntity, period, cost]);
}

/** `refundUnitUsage` inside a group's work. */
export const refundUnitUsageIn = (run: SqlRun, billingEntity: string, period: string, cost: number): void => {
  run(REFUND, [cost, billingEntity, period, cost]);
};
