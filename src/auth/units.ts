import type { DataSource } from 'typeorm';
import { sql } from '../../db/sql.js';
import { monthPeriod } from '../domain/time.js';
import type { SqlCondition } from './rateLimit.js';

export interface UnitsResult {
  allowed: boolean;
  limit: number;
  used: number;
  remaining: number;
  cost: number;
}

const CHARGE_INSERT = 'INSERT INTO "unit_usage" ("billingEntity", "period", "used")';
const CHARGE_UPSERT =
  'ON CONFLICT ("billingEntity", "period") DO UPDATE SET "used" = "unit_usage"."used" + excluded."used" ' +
  'WHERE "unit_usage"."used" + excluded."used" <= ? RETURNING "used"';

/**
 * Charges `cost` monthly API units to a billing entity, atomically: one upsert whose
 * update only happens while `used + cost <= limit`, so concurrent requests never overspend and the balance
 * survives restarts. The period is the UTC month, so the count resets on the 1st. A refused or zero-cost
 * charge reads the balance instead. With `onlyIf`, nothing is charged unless that condition holds when the
 * statement runs (the rate limit's `allowedAfterConsume`: count and charge in one commit).
 */
export async function chargeUnits(
  ds: DataSource,
  billingEntity: string,
  now: Date,
  cost: number,
  limit: number,
  onlyIf?: SqlCondition,
): Promise<UnitsResult> {
  const period = monthPeriod(now);
  if (cost > 0 && cost <= limit) {
    const r = await sql<{ used: number | string }>(
      ds,
      onlyIf
        ? `${CHARGE_INSERT} SELECT ?, ?, ? WHERE ${onlyIf.sql} ${CHARGE_UPSERT}`
        : `${CHARGE_INSERT} VALUES (?, ?, ?) ${CHARGE_UPSERT}`,
      onlyIf ? [billingEntity, period, cost, ...onlyIf.params, limit] : [billingEntity, period, cost, limit],
    );
    if (r.rows.length) {
      const used = Number(r.rows[0].used);
      return { allowed: true, limit, used, remaining: Math.max(0, limit - used), cost };
    }
  }
  const cur = await sql<{ used: number | string }>(
    ds,
    'SELECT "used" FROM "unit_usage" WHERE "billingEntity" = ? AND "period" = ?',
    [billingEntity, period],
  );
  const used = Number(cur.rows[0]?.used ?? 0);
  return { allowed: cost === 0, limit, used, remaining: Math.max(0, limit - used), cost: 0 };
}

/** Gives back units charged to a request that was refused for its input before doing any work. */
export async function refundUnits(ds: DataSource, billingEntity: string, now: Date, cost: number): Promise<void> {
  if (cost <= 0) return;
  await sql(
    ds,
    'UPDATE "unit_usage" SET "used" = "used" - ? WHERE "billingEntity" = ? AND "period" = ? AND "used" >= ?',
    [cost, billingEntity, monthPeriod(now), cost],
  );
}
