import type { Actor } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { isoWithOffset, nextMonthStart } from '../domain/time.js';
import type { BalanceState, RateState, RequestContext, ResponseState } from '../contract.js';
import { RATE_WINDOW_SECONDS, type RateLimitResult } from './rateLimit.js';
import { chargeUnits, refundUnits, type UnitsResult } from './units.js';

/**
 * The meter: every request counted in its 60 s window, and the monthly units
 * charged once it is authorized. Each function records what it learnt on the response state (`rate`,
 * `balance`, `retryAfter`, `units`); the adapters render the headers.
 */

export const planOf = (s: Services, actor: Actor) => s.config.plans[actor.plan] ?? s.config.plans.default;

/** The subject the 60 s window counts for: the API key, or the user behind an OAuth token. */
const rateSubject = (a: Actor) =>
  a.credential.method === 'api_key'
    ? { key: `key:${a.credential.id}`, scope: 'api_key' as const }
    : { key: `user:${a.userId}`, scope: 'user' as const };

export function recordRate(out: ResponseState, r: RateLimitResult, scope: RateState['scope']): void {
  out.rate = {
    limit: r.limit,
    remaining: r.remaining,
    resetSeconds: r.resetSeconds,
    windowSeconds: RATE_WINDOW_SECONDS,
    scope,
  };
}

export function recordBalance(ctx: RequestContext, u: UnitsResult): BalanceState {
  const balance = {
    limit: u.limit,
    used: u.used,
    remaining: u.remaining,
    cost: u.cost,
    resetsAt: isoWithOffset(nextMonthStart(ctx.services.now())),
  };
  ctx.out.balance = balance;
  return balance;
}

/** 429 `rate_limited`: the window is spent; `retryAfter` recorded. */
export function rateLimited(out: ResponseState, retryAfter: number): DomainError {
  out.retryAfter = retryAfter;
  return new DomainError('rate_limited', 'Rate limit exceeded; retry after the window resets', {
    details: { retryAfterSeconds: retryAfter },
  });
}

/** Counts an unauthenticated request against its client address's window (guessing keys is limited too). */
export async function countAddress(
  o: { services: Services; rateLimiter: RequestContext['rateLimiter']; clientIp: string },
  out: ResponseState,
) {
  const r = await o.rateLimiter.consume(`ip:${o.clientIp}`, o.services.config.plans.default.rateLimit);
  recordRate(out, r, 'ip');
  if (!r.allowed) throw rateLimited(out, r.resetSeconds);
}

/** The balance without a charge (a refused request answers with it). */
export async function recordUnchargedBalance(ctx: RequestContext, actor: Actor): Promise<void> {
  recordBalance(ctx, await charge(ctx, actor, 0));
}

/**
 * Counts the request in its actor's window (every authenticated request counts, failures included); a
 * spent window is 429 with the uncharged balance. With `charge` (nothing can refuse the request between
 * the count and the charge) and where the database allows it (SQLite: `allowedAfterConsume`), the charge
 * is written in the same group commit, only if the count allows it: the same outcome as one after the
 * other, one commit less. Returns that charge, or undefined when only counted.
 */
export async function count(
  ctx: RequestContext,
  actor: Actor,
  cost: number,
  charge: boolean,
): Promise<UnitsResult | undefined> {
  const { services } = ctx;
  const plan = planOf(services, actor);
  const subject = rateSubject(actor);
  const countAllows = charge ? ctx.rateLimiter.allowedAfterConsume?.(subject.key, plan.rateLimit) : undefined;
  if (countAllows) {
    const [r, units] = await Promise.all([
      ctx.rateLimiter.consume(subject.key, plan.rateLimit),
      chargeUnits(services.ds, actor.billingEntity, services.now(), cost, plan.monthlyUnits, countAllows),
    ]);
    recordRate(ctx.out, r, subject.scope);
    if (!r.allowed) {
      recordBalance(ctx, units); // not charged: the balance
      throw rateLimited(ctx.out, r.resetSeconds);
    }
    return units;
  }
  const r = await ctx.rateLimiter.consume(subject.key, plan.rateLimit);
  recordRate(ctx.out, r, subject.scope);
  if (!r.allowed) {
    await recordUnchargedBalance(ctx, actor);
    throw rateLimited(ctx.out, r.resetSeconds);
  }
  return undefined;
}

/** Charges the operation's units, unless `count` already did. */
export async function charge(ctx: RequestContext, actor: Actor, cost: number): Promise<UnitsResult> {
  const { services } = ctx;
  return chargeUnits(services.ds, actor.billingEntity, services.now(), cost, planOf(services, actor).monthlyUnits);
}

/** The charge's outcome: its balance recorded, and the request runs, or is refused for exhausted units. */
export function requireUnits(ctx: RequestContext, cost: number, units: UnitsResult): void {
  const balance = recordBalance(ctx, units);
  if (!units.allowed) {
    throw new DomainError('api_units_exhausted', 'Monthly API units are exhausted', {
      details: { limit: units.limit, used: units.used, cost, resetsAt: balance.resetsAt },
    });
  }
  ctx.out.units = units.cost;
}

/** Failures where nothing was done: refused input, a busy database, a full disk. Their units are given back. */
const REFUNDED = new Set(['validation_error', 'rule_violation', 'service_unavailable', 'insufficient_storage']);

/**
 * After a failed handler: gives the units back when nothing was done (a refund the busy database refuses is only
 * logged).
 */
export async function refundIfNothingDone(
  ctx: RequestContext,
  actor: Actor,
  units: UnitsResult,
  errorCode: string,
): Promise<void> {
  if (!REFUNDED.has(errorCode) || units.cost <= 0) return;
  try {
    await refundUnits(ctx.services.ds, actor.billingEntity, ctx.services.now(), units.cost);
    recordBalance(ctx, { ...units, used: units.used - units.cost, remaining: units.remaining + units.cost, cost: 0 });
    ctx.out.units = 0;
  } catch (err) {
    ctx.services.log.error({ err, requestId: ctx.requestId }, 'unit refund failed');
  }
}
