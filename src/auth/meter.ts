import type { Actor } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { isoWithOffset, nextMonthStart } from '../domain/time.js';
import { sqliteGroupWork, type SqlRun } from '../../db/sql.js';
import {
  domainErrorOf,
  type AuditInput,
  type BalanceState,
  type ErrorMapping,
  type ProcedureMeta,
  type RateLimiter,
  type RateState,
  type RequestContext,
  type ResponseState,
} from '../contract.js';
import { callRow, recordAudit, recordAuditIn } from './audit.js';
import { RATE_WINDOW_SECONDS, type RateLimitResult } from './rateLimit.js';
import { chargeUnits, chargeUnitsIn, refundUnits, refundUnitsIn, type UnitsResult } from './units.js';

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
 * the count and the charge) and where the database allows it (SQLite: the limiter's `consumeIn`), the charge
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
  const consumeIn = ctx.rateLimiter.consumeIn;
  const together =
    charge && consumeIn
      ? sqliteGroupWork(services.ds, (run) => meterIn(run, consumeIn, services, actor, subject.key, cost))
      : undefined;
  if (together) {
    const { r, units } = await together;
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

/**
 * The window's count and, when it allows the request, the charge of `cost` (else the balance), run at once inside a
 * group's work (db/sql.ts `sqliteGroupWork`): what `count` and `settleRead` write in one commit.
 */
function meterIn(
  run: SqlRun,
  consumeIn: NonNullable<RateLimiter['consumeIn']>,
  services: Services,
  actor: Actor,
  subjectKey: string,
  cost: number,
): { r: RateLimitResult; units: UnitsResult } {
  const plan = planOf(services, actor);
  const r = consumeIn(run, subjectKey, plan.rateLimit);
  const units = chargeUnitsIn(run, actor.billingEntity, services.now(), r.allowed ? cost : 0, plan.monthlyUnits);
  return { r, units };
}

/** Until when (ms) a rate subject's window or a billing entity's units were last seen spent, per service. */
const spentUntil = new WeakMap<Services, Map<string, number>>();
const SPENT_KEPT_MAX = 10_000;
const UNITS_SPENT_RECHECK_MS = 60_000;

// a window's subject (`user:<id>` for a token's user) and a billing entity (`user:<id>` for a personal one) can be
// spelled alike: each kind is kept under its own prefix
const windowOf = (subject: string) => `window:${subject}`;
const unitsOf = (billingEntity: string) => `units:${billingEntity}`;

function markSpent(s: Services, key: string, until: number): void {
  let m = spentUntil.get(s);
  // past the bound, everything seen is forgotten: the next reads of those actors are refused after running, once
  if (!m || m.size >= SPENT_KEPT_MAX) spentUntil.set(s, (m = new Map()));
  m.set(key, until);
}

/** Whether `key` was seen spent and still is; an entry past its time is forgotten, so the map empties again. */
function seenSpent(spent: Map<string, number>, key: string): boolean {
  const until = spent.get(key);
  if (until === undefined) return false;
  if (until > Date.now()) return true;
  spent.delete(key);
  return false;
}

/**
 * Whether a read may run before it is counted and charged (`settleRead`): on SQLite (the limiter's `consumeIn`),
 * not a stream (it holds a connection and a lease from the moment it opens), and not for an actor this process has
 * seen out of window or units lately, whose reads are counted first and refused before they run.
 */
export function countsAfterRunning(ctx: RequestContext, meta: ProcedureMeta | undefined, actor: Actor): boolean {
  if (meta?.kind !== 'read' || meta.http.stream || ctx.rateLimiter.consumeIn === undefined) return false;
  // (nobody seen spent, the common case: no key is built)
  const spent = spentUntil.get(ctx.services);
  return (
    !spent?.size ||
    (!seenSpent(spent, windowOf(rateSubject(actor).key)) && !seenSpent(spent, unitsOf(actor.billingEntity)))
  );
}

/**
 * A read's count, charge and audit row, written after it ran, together in one group commit (SQLite; only where
 * `countsAfterRunning`). The outcome is the one the order of checks gives (docs/security-model.md): a spent
 * window is 429, spent units 402, the read's answer dropped (a read changes nothing, so nothing is undone); a read
 * failed for nothing done is charged and refunded in the same commit; the row says what the answer says. Returns
 * the refusal, or undefined. A window or units seen spent make this process count the actor's next reads first.
 * If the group fails, nothing of it was written: the error is thrown, the row not written (the caller audits).
 */
export async function settleRead(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  actor: Actor,
  cost: number,
  outcome: { ok: true } | { ok: false; error: unknown },
  toError: ErrorMapping,
): Promise<DomainError | undefined> {
  const { services } = ctx;
  const subject = rateSubject(actor);
  const consumeIn = ctx.rateLimiter.consumeIn!;
  const refundable = !outcome.ok && REFUNDED.has(toError(outcome.error).code);
  let refusal: DomainError | undefined;
  let row: AuditInput | undefined;
  let afterCommit: (() => void) | undefined;
  const settled = sqliteGroupWork(services.ds, (run) => {
    const { r, units } = meterIn(run, consumeIn, services, actor, subject.key, cost);
    recordRate(ctx.out, r, subject.scope);
    if (!r.allowed || r.remaining === 0) markSpent(services, windowOf(subject.key), Date.now() + r.resetSeconds * 1000);
    if (!units.allowed || units.remaining < cost)
      markSpent(services, unitsOf(actor.billingEntity), Date.now() + UNITS_SPENT_RECHECK_MS);
    if (!r.allowed) {
      recordBalance(ctx, units);
      refusal = rateLimited(ctx.out, r.resetSeconds);
    } else {
      try {
        requireUnits(ctx, cost, units);
      } catch (err) {
        refusal = err as DomainError;
      }
      if (!refusal && refundable && units.cost > 0) {
        try {
          refundUnitsIn(run, actor.billingEntity, services.now(), units.cost);
          recordRefund(ctx, units);
        } catch (err) {
          services.log.error({ err, requestId: ctx.requestId }, 'unit refund failed');
        }
      }
    }
    row = callRow(ctx, meta, refusal ? { ok: false, error: refusal } : outcome, refusal ? domainErrorOf : toError);
    afterCommit = recordAuditIn(run, services, row);
  });
  // (the limiter has `consumeIn` only where the group runs work: countsAfterRunning said so)
  if (!settled) throw new Error('settleRead needs the SQLite group commit (db/sql.ts sqliteGroupWork)');
  await settled;
  // an older row waiting in memory: this one goes behind it
  if (afterCommit) afterCommit();
  else await recordAudit(services, row!);
  return refusal;
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

/** The balance after `units` were given back: nothing spent. */
function recordRefund(ctx: RequestContext, units: UnitsResult): void {
  recordBalance(ctx, { ...units, used: units.used - units.cost, remaining: units.remaining + units.cost, cost: 0 });
  ctx.out.units = 0;
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
    recordRefund(ctx, units);
  } catch (err) {
    ctx.services.log.error({ err, requestId: ctx.requestId }, 'unit refund failed');
  }
}
