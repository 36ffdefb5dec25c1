import type { DataSource } from 'typeorm';
import { chargeUnitUsage, refundUnitUsage, unitUsage } from '../../db/stores/units.js';
import { monthPeriod } from '../domain/time.js';
import type { SqlCondition } from './rateLimit.js';

export interface UnitsResult {
  allowed: boolean;
  limit: number;
  used: number;
  remaining: number;
  cost: number;
}

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
    const used = await chargeUnitUsage(ds, billingEntity, period, cost, limit, onlyIf);
    if (used !== null) return { allowed: true, limit, used, remaining: Math.max(0, limit - used), cost };
  }
  const used = await unitUsage(ds, billingEntity, period);
  return { allowed: cost === 0, limit, used, remaining: Math.max(0, limit - used), cost: 0 };
}

/** Gives back units charged to a request that was refused for its input before doing any work. */
export async function refundUnits(ds: DataSource, billingEntity: string, now: Date, cost: number): Promise<void> {
  if (cost <= 0) return;
  await refundUnitUsage(ds, billingEntity, monthPeriod(now), cost);
}
