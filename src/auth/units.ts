import type { DataSource } from 'typeorm';
import type { SqlRun } from '../../db/sql.js';
import {
  chargeUnitUsage,
  chargeUnitUsageIn,
  refundUnitUsage,
  refundUnitUsageIn,
  unitUsage,
  unitUsageIn,
} from '../../db/stores/units.js';
import { monthPeriod } from '../domain/time.js';

export interface UnitsResult {
  allowed: boolean;
  limit: number;
  used: number;
  remaining: number;
  cost: number;
}

const charged = (limit: number, used: number, cost: number): UnitsResult => ({
  allowed: true,
  limit,
  used,
  remaining: Math.max(0, limit - used),
  cost,
});
/** Nothing charged: the balance; allowed only when nothing was to be charged. */
const uncharged = (limit: number, used: number, cost: number): UnitsResult => ({
  allowed: cost === 0,
  limit,
  used,
  remaining: Math.max(0, limit - used),
  cost: 0,
});
const chargeable = (cost: number, limit: number) => cost > 0 && cost <= limit;

/**
 * Charges `cost` monthly API units to a billing entity, atomically: one upsert whose
 * update only happens while `used + cost <= limit`, so concurrent requests never overspend and the balance
 * survives restarts. The period is the UTC month, so the count resets on the 1st. A refused or zero-cost
 * charge reads the balance instead.
 */
export async function chargeUnits(
  ds: DataSource,
  billingEntity: string,
  now: Date,
  cost: number,
  limit: number,
): Promise<UnitsResult> {
  const period = monthPeriod(now);
  if (chargeable(cost, limit)) {
    const used = await chargeUnitUsage(ds, billingEntity, period, cost, limit);
    if (used !== null) return charged(limit, used, cost);
  }
  return uncharged(limit, await unitUsage(ds, billingEntity, period), cost);
}

/** `chargeUnits` inside a group's work (db/sql.ts `sqliteGroupWork`): the same statements, run at once. */
export function chargeUnitsIn(run: SqlRun, billingEntity: string, now: Date, cost: number, limit: number): UnitsResult {
  const period = monthPeriod(now);
  if (chargeable(cost, limit)) {
    const used = chargeUnitUsageIn(run, billingEntity, period, cost, limit);
    if (used !== null) return charged(limit, used, cost);
  }
  return uncharged(limit, unitUsageIn(run, billingEntity, period), cost);
}

/** Gives back units charged to a request that was refused for its input before doing any work. */
export async function refundUnits(ds: DataSource, billingEntity: string, now: Date, cost: number): Promise<void> {
  if (cost <= 0) return;
  await refundUnitUsage(ds, billingEntity, monthPeriod(now), cost);
}

/** `refundUnits` inside a group's work. */
export function refundUnitsIn(run: SqlRun, billingEntity: string, now: Date, cost: number): void {
  if (cost > 0) refundUnitUsageIn(run, billingEntity, monthPeriod(now), cost);
}
