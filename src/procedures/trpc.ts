import { initTRPC } from '@trpc/server';
import { writeAudit } from '../auth/audit.js';
import { authenticate } from '../auth/authenticate.js';
import { abortIdempotent, beginIdempotent, completeIdempotent, fingerprint, parseIdempotencyKey } from '../auth/idempotency.js';
import { RATE_WINDOW_SECONDS } from '../auth/rateLimit.js';
import { chargeUnits, refundUnits, type UnitsResult } from '../auth/units.js';
import type { Actor, AuthenticatedActor } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import { isoWithOffset, nextMonthStart } from '../domain/time.js';
import type { RequestContext } from './context.js';
import { toDomainError } from './errors.js';
import type { ProcedureMeta } from './meta.js';

const t = initTRPC.context<RequestContext>().meta<ProcedureMeta>().create({ isServer: true });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Response headers every surface sends: the rate limit (spec 8) and the unit balance. */
function setRateHeaders(ctx: RequestContext, r: { limit: number; remaining: number; resetSeconds: number }, scope: string) {
  Object.assign(ctx.out.headers, {
    'RateLimit-Limit': String(r.limit),
    'RateLimit-Remaining': String(r.remaining),
    'RateLimit-Reset': String(r.resetSeconds),
    'RateLimit-Policy': `${r.limit};w=${RATE_WINDOW_SECONDS}`,
    'Svc-RateLimit-Scope': scope,
  });
}

function setUnitHeaders(ctx: RequestContext, u: UnitsResult) {
  Object.assign(ctx.out.headers, {
    'Svc-Api-Units-Limit': String(u.limit),
    'Svc-Api-Units-Remaining': String(u.remaining),
    'Svc-Api-Units-Used': String(u.used),
    'Svc-Api-Units-Cost': String(u.cost),
    'Svc-Api-Units-Reset': isoWithOffset(nextMonthStart(ctx.services.now())),
  });
}

const planOf = (ctx: RequestContext, actor: Actor) => ctx.services.config.plans[actor.plan] ?? ctx.services.config.plans.default;

/** The subject the 60 s window counts for: the API key, or the user behind an OAuth token. */
const rateSubject = (a: Actor) =>
  a.credential.method === 'api_key' ? { key: `key:${a.credential.id}`, scope: 'api_key' } : { key: `user:${a.userId}`, scope: 'user' };

type Outcome = { ok: true } | { ok: false; error: unknown };

/** One audit row per call, success or failure (spec 5.7). A failed write is logged, never the caller's failure. */
async function audit(ctx: RequestContext, meta: ProcedureMeta | undefined, outcome: Outcome): Promise<void> {
  const status = outcome.ok ? (ctx.out.status ?? meta?.http.successStatus ?? 200) : toDomainError(outcome.error).status;
  const a = ctx.out.actor;
  try {
    await writeAudit(ctx.services, {
      requestId: ctx.requestId, surface: ctx.surface, method: ctx.method, routePattern: ctx.routePattern, statusCode: status,
      authMethod: a?.credential.method ?? null, actor: a?.kind ?? null,
      delegatingUserId: a?.kind === 'agent' ? a.userId : null, scopes: a?.scopes ?? [],
      organizationId: a?.organizationId ?? null, userId: a?.userId ?? null,
      apiKeyId: a?.credential.method === 'api_key' ? a.credential.id : null,
      tokenId: a?.credential.method === 'oauth_bearer' ? a.credential.id : null,
      units: ctx.out.units, errorCode: outcome.ok ? null : toDomainError(outcome.error).code,
      agentRunId: a?.agentRunId ?? null,
    });
  } catch (err) {
    ctx.services.log.error({ err, requestId: ctx.requestId }, 'audit write failed');
  }
}

/**
 * Spec 5.5 condition 1: the actor, or the 401. Unauthenticated requests are counted per client address
 * (so guessing keys is limited too) before the 401 is thrown.
 */
async function authenticated(ctx: RequestContext): Promise<AuthenticatedActor> {
  try {
    return ctx.authenticated ?? (await authenticate(ctx.services, ctx.credentials));
  } catch (err) {
    const r = await ctx.rateLimiter.consume(`ip:${ctx.clientIp}`, ctx.services.config.plans.default.rateLimit);
    setRateHeaders(ctx, r, 'ip');
    if (!r.allowed) throw rateLimited(ctx, r.resetSeconds);
    throw err;
  }
}

/** The audience pin and the scope: why this actor may not call this operation, if it may not. */
function accessRefusal(ctx: RequestContext, meta: ProcedureMeta | undefined, actor: Actor): DomainError | undefined {
  if (actor.credential.method === 'oauth_bearer' && actor.audience !== ctx.audience) {
    return new DomainError('invalid_audience', `This token is pinned to ${actor.audience}, not ${ctx.audience}`);
  }
  const required = [...ctx.surfaceScopes, ...(meta?.scope ? [meta.scope] : [])];
  const missing = required.filter((s) => !actor.scopes.includes(s));
  if (!missing.length) return undefined;
  return new DomainError('insufficient_scope', `Missing scope: ${missing.join(' ')}`, { details: { required, granted: actor.scopes } });
}

function rateLimited(ctx: RequestContext, retryAfter: number) {
  ctx.out.headers['Retry-After'] = String(retryAfter);
  return new DomainError('rate_limited', 'Rate limit exceeded; retry after the window resets', {
    details: { retryAfterSeconds: retryAfter },
  });
}

/** What charging a request decided: replay a stored response, or run (holding the idempotency claim, if any). */
type Charge = { kind: 'replay'; body: unknown } | { kind: 'run'; units: UnitsResult; claimId?: string };

/**
 * Spec 5.5, in its order: authenticate (1), count the request in its 60 s window (5; every authenticated
 * request counts, failures included), the audience pin and the scope, the input, then for writes with an
 * `Idempotency-Key` the claim of the key (a replay returns the stored response and costs nothing), and the
 * monthly units (6, 7), charged once a request is authorized, before it runs. A refused request is charged
 * nothing and answers with the balance.
 * When nothing can refuse the request between the count and the charge (its access and input are fine, no
 * key to claim) and the database allows it (SQLite: `allowedAfterConsume`), both are written in one group
 * commit, the charge only if the count allows it: the same outcome as one after the other, one commit less.
 */
async function admit(
  ctx: RequestContext, meta: ProcedureMeta | undefined, getRawInput: () => Promise<unknown>,
): Promise<{ actor: AuthenticatedActor; charge: Charge }> {
  const { services } = ctx;
  const actor = await authenticated(ctx);
  ctx.out.actor = actor;
  const plan = planOf(ctx, actor);
  const subject = rateSubject(actor);
  const cost = meta?.units ?? 1;
  const balance = () => chargeUnits(services.ds, actor.billingEntity, services.now(), 0, plan.monthlyUnits);
  const refusal = accessRefusal(ctx, meta, actor) ?? ctx.inputError ?? unacceptableInput(await getRawInput());
  const claims = meta?.kind === 'write' && ctx.idempotencyKey !== undefined;
  const countAllows = refusal || claims ? undefined : ctx.rateLimiter.allowedAfterConsume?.(subject.key, plan.rateLimit);
  if (countAllows) {
    const [r, units] = await Promise.all([
      ctx.rateLimiter.consume(subject.key, plan.rateLimit),
      chargeUnits(services.ds, actor.billingEntity, services.now(), cost, plan.monthlyUnits, countAllows),
    ]);
    setRateHeaders(ctx, r, subject.scope);
    if (!r.allowed) {
      setUnitHeaders(ctx, units); // not charged: the balance
      throw rateLimited(ctx, r.resetSeconds);
    }
    return { actor, charge: run(ctx, cost, units) };
  }

  const r = await ctx.rateLimiter.consume(subject.key, plan.rateLimit);
  setRateHeaders(ctx, r, subject.scope);
  if (!r.allowed) {
    setUnitHeaders(ctx, await balance());
    throw rateLimited(ctx, r.resetSeconds);
  }
  if (refusal) {
    if (refusal.code === 'invalid_audience') {
      ctx.out.headers['WWW-Authenticate'] = 'Bearer error="invalid_token", error_description="audience mismatch"';
    }
    setUnitHeaders(ctx, await balance());
    throw refusal;
  }
  let claimId: string | undefined;
  if (claims) {
    const key = parseIdempotencyKey(ctx.idempotencyKey!);
    const begun = await beginIdempotent(
      services,
      { credentialId: `${actor.credential.method}:${actor.credential.id}`, method: ctx.method, path: ctx.path, key },
      fingerprint(await getRawInput()),
    ).catch(async (err) => {
      setUnitHeaders(ctx, await balance());
      throw err;
    });
    if (begun.kind === 'replay') {
      setUnitHeaders(ctx, await balance());
      ctx.out.status = begun.response.status;
      Object.assign(ctx.out.headers, begun.response.headers, { 'Idempotent-Replayed': 'true' });
      return { actor, charge: { kind: 'replay', body: begun.response.body } };
    }
    claimId = begun.id;
  }
  const units = await chargeUnits(services.ds, actor.billingEntity, services.now(), cost, plan.monthlyUnits);
  if (!units.allowed && claimId) await abortIdempotent(services, claimId);
  return { actor, charge: run(ctx, cost, units, claimId) };
}

/** The charge's outcome: its headers, and the request runs, or is refused for exhausted units. */
function run(ctx: RequestContext, cost: number, units: UnitsResult, claimId?: string): Charge {
  setUnitHeaders(ctx, units);
  if (!units.allowed) {
    throw new DomainError('api_units_exhausted', 'Monthly API units are exhausted', {
      details: { limit: units.limit, used: units.used, cost, resetsAt: ctx.out.headers['Svc-Api-Units-Reset'] },
    });
  }
  ctx.out.units = units.cost;
  return { kind: 'run', units, claimId };
}

/** Failures where nothing was done: refused input, a busy database, a full disk. Their units are given back. */
const REFUNDED = new Set(['validation_error', 'rule_violation', 'service_unavailable', 'insufficient_storage']);

/** After the handler: give the units back when its input was refused, and store or release the idempotency key. */
async function settle(
  ctx: RequestContext, meta: ProcedureMeta | undefined, actor: Actor, c: Extract<Charge, { kind: 'run' }>,
  result: { ok: true; data: unknown } | { ok: false; error: unknown },
): Promise<void> {
  const { units, claimId } = c;
  if (!result.ok && REFUNDED.has(toDomainError(result.error).code) && units.cost > 0) {
    // nothing was done: the units are given back (a refund the busy database refuses is only logged)
    try {
      await refundUnits(ctx.services.ds, actor.billingEntity, ctx.services.now(), units.cost);
      setUnitHeaders(ctx, { ...units, used: units.used - units.cost, remaining: units.remaining + units.cost, cost: 0 });
      ctx.out.units = 0;
    } catch (err) {
      ctx.services.log.error({ err, requestId: ctx.requestId }, 'unit refund failed');
    }
  }
  if (claimId) {
    if (result.ok) {
      await completeIdempotent(ctx.services, claimId, {
        status: ctx.out.status ?? meta?.http.successStatus ?? 200,
        body: result.data,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
      });
    } else {
      await abortIdempotent(ctx.services, claimId);
    }
  }
}

/**
 * The pipeline as one tRPC middleware (each middleware level costs tRPC two copies of the call options):
 * audit ⟶ admit (authenticate, rate limit, scope, input, idempotency, units) ⟶ handler ⟶ settle.
 * The audit row is written once, after everything else, whatever happened.
 */
const pipeline = t.middleware(async ({ ctx, meta, next, getRawInput }) => {
  try {
    const { actor, charge: c } = await admit(ctx, meta, getRawInput);
    if (c.kind === 'replay') {
      const replayed = { ok: true as const, data: c.body, ctx, marker: 'middlewareMarker' as never };
      await audit(ctx, meta, replayed);
      return replayed;
    }
    // The actor joins the context by assignment: `next({ ctx })` would have tRPC copy the whole context
    // (a defineProperty per key) once more on every call. Typed as that call, so handlers see `ctx.actor`.
    (ctx as RequestContext & { actor: AuthenticatedActor }).actor = actor;
    const result = await (next as unknown as () => ReturnType<typeof next<{ actor: AuthenticatedActor }>>)();
    await settle(ctx, meta, actor, c, result);
    await audit(ctx, meta, result);
    return result;
  } catch (err) {
    await audit(ctx, meta, { ok: false, error: err });
    throw err;
  }
});

const MAX_INPUT_DEPTH = 32;

/**
 * Rejects input no operation can mean, before anything else reads it: nesting deeper than 32 levels, and
 * NUL characters (meaningless in any field, and refused by PostgreSQL text). Iterative, so hostile
 * nesting cannot exhaust the stack.
 */
function unacceptableInput(input: unknown): DomainError | undefined {
  const stack: [unknown, string, number][] = [[input, '', 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string' && v.includes('\u0000')) {
      return new DomainError('validation_error', 'Strings must not contain NUL characters', { details: { field: path || '(input)' } });
    }
    if (v && typeof v === 'object') {
      if (depth >= MAX_INPUT_DEPTH) {
        return new DomainError('validation_error', `Input is nested deeper than ${MAX_INPUT_DEPTH} levels`, { details: { field: path } });
      }
      for (const [k, child] of Object.entries(v)) stack.push([child, path ? `${path}.${k}` : k, depth + 1]);
    }
  }
  return undefined;
}

/** Every /v1 operation and MCP tool: audit ⟶ authenticate, rate limit, scope ⟶ units, idempotency. */
export const apiProcedure = t.procedure.use(pipeline);
/** Public operations (the OpenAPI document): no credential, no audit. */
export const publicProcedure = t.procedure;
