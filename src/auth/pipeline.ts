import type { AuthenticatedActor } from '../domain/actor.js';
import type { DomainError } from '../domain/errors.js';
import {
  domainErrorOf,
  type ErrorMapping,
  type KeyClaim,
  type ProcedureMeta,
  type RequestContext,
} from '../contract.js';
import { auditCall } from './audit.js';
import { authenticateRequest } from './authenticate.js';
import { authorize } from './authorize.js';
import { abortIdempotent, claimKey, parseIdempotencyKey, settleKey } from './idempotency.js';
import { unacceptableInput } from './input.js';
import {
  charge,
  count,
  countsAfterRunning,
  recordUnchargedBalance,
  refundIfNothingDone,
  requireUnits,
  settleRead,
} from './meter.js';
import type { UnitsResult } from './units.js';

/**
 * The chain every /v1 operation and MCP tool call runs, in its order (docs/security-model.md#the-order-of-checks). Each
 * step is a function of its own file in src/auth/ and records what it decided on the context (`ctx.out`: the actor, the
 * window, the balance, `Retry-After`, the challenge, a replay); none sets a header: the REST and MCP adapters render
 * them (src/http/headers.ts).
 *
 *   1. authenticate   (authenticate.ts)  the actor, or 401; a refused credential counts against its address
 *   2. authorize      (authorize.ts)     the audience pin, the surface's and the operation's scopes
 *   3. input          (input.ts)         what the adapter could not read; size, nesting, NUL, Unicode
 *   4. meter: count   (meter.ts)         the 60 s window; every authenticated request counts, refused ones
 *                                        too (a refusal of 2–3 is answered after it, with the balance)
 *   5. idempotency    (idempotency.ts)   a write's key claimed; a replay answers the stored response, free
 *   6. meter: charge  (meter.ts)         the monthly units, once the request is authorized, before it runs
 *   7. the handler, then: refund what did nothing (meter.ts), store or release the key (idempotency.ts)
 *   8. audit          (audit.ts)         one row, after everything else, whatever happened
 *
 * When nothing can refuse the request between the count and the charge (its access and input are fine, no
 * key to claim) and the database allows it (SQLite: the limiter's `consumeIn`), 4 and 6 are written in one
 * group commit, the charge only if the count allows it: the same outcome, one commit less. A read there
 * (`countsAfterRunning`) runs first, and 4, 6, its refund and 8 are written in one commit after it (`settleRead`):
 * the same answers and rows, one commit and one turn less.
 */
export async function pipeline<R extends { ok: true; data: unknown } | { ok: false; error: unknown }>(o: {
  ctx: RequestContext;
  meta: ProcedureMeta | undefined;
  getRawInput: () => Promise<unknown>;
  /** Runs the rest of the procedure (input parser, handler, output parser). */
  next: () => Promise<R>;
  /** The result of a replayed write: its stored body. */
  replayed: (body: unknown) => R;
  /** Maps what `next` failed with to the domain error: the caller knows how its framework wraps a handler's error. */
  toError: ErrorMapping;
}): Promise<R> {
  const { ctx, meta, getRawInput, toError } = o;
  let claim: KeyClaim | undefined;
  let audited = false;
  try {
    const { actor, cost, claims, counted, deferred } = await admit(ctx, meta, getRawInput, true);
    if (deferred) {
      (ctx as RequestContext & { actor: AuthenticatedActor }).actor = actor;
      let result: R | undefined;
      let thrown: { error: unknown } | undefined;
      try {
        result = await o.next();
      } catch (error) {
        thrown = { error };
      }
      const outcome = thrown ? { ok: false as const, error: thrown.error } : result!;
      const refusal = await settleRead(ctx, meta, actor, cost, outcome, toError);
      audited = true;
      if (refusal) throw refusal;
      if (thrown) throw thrown.error;
      return result!;
    }
    if (claims) {
      const key = parseIdempotencyKey(ctx.idempotencyKey!);
      const claimed = await claimKey(ctx, meta, actor, key, await getRawInput()).catch(async (err: unknown) => {
        await recordUnchargedBalance(ctx, actor);
        throw err;
      });
      if (claimed.kind === 'replay') {
        await recordUnchargedBalance(ctx, actor);
        const replayed = o.replayed(claimed.body);
        await auditCall(ctx, meta, replayed, toError);
        return replayed;
      }
      claim = claimed.claim;
    }
    const units: UnitsResult = counted ?? (await charge(ctx, actor, cost));
    requireUnits(ctx, cost, units);

    // The actor joins the context by assignment: `next({ ctx })` would have tRPC copy the whole context
    // (a defineProperty per key) once more on every call. Handlers see it as `ctx.actor`.
    (ctx as RequestContext & { actor: AuthenticatedActor }).actor = actor;
    // the write's transaction stores the key's outcome with the write (`inWriteTransaction`)
    if (claim) ctx.keyClaim = claim;
    const result = await o.next();
    if (!result.ok) await refundIfNothingDone(ctx, actor, units, toError(result.error).code);
    if (claim) await settleKey(ctx, claim, result);
    await auditCall(ctx, meta, result, toError);
    return result;
  } catch (err) {
    // a refused or failed request releases its key (a key whose write committed keeps its answer)
    if (claim) await abortIdempotent(ctx.services, claim);
    if (!audited) await auditCall(ctx, meta, { ok: false, error: err }, toError);
    throw err;
  }
}

/**
 * Steps 1–4: the actor, the refusal of 2–3 decided and answered after the count. With `chargeWithCount`,
 * the count carries the charge when nothing else can refuse (see above); returns that charge as `counted`.
 */
async function admit(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  getRawInput: () => Promise<unknown>,
  chargeWithCount: boolean,
) {
  const actor = await authenticateRequest(ctx, ctx.out);
  ctx.out.actor = actor;
  const denied = authorize(ctx.surface, ctx.services.config.baseUrl, actor, meta?.scope);
  const refusal = denied?.error ?? ctx.inputError ?? unacceptableInput(await getRawInput(), meta);
  const cost = meta?.units ?? 1;
  const claims = meta?.kind === 'write' && ctx.idempotencyKey !== undefined;
  // a read runs first, and is counted, charged and audited in one commit after it (settleRead)
  if (chargeWithCount && !refusal && countsAfterRunning(ctx, meta, actor))
    return { actor, cost, claims, counted: undefined, deferred: true };
  const counted = await count(ctx, actor, cost, chargeWithCount && !refusal && !claims);
  if (refusal) {
    if (denied) ctx.out.challenge = denied.challenge;
    await recordUnchargedBalance(ctx, actor);
    throw refusal;
  }
  return { actor, cost, claims, counted, deferred: false };
}

/**
 * The same steps 1–4 and the audit for a call a surface must refuse before dispatching it (MCP answers a
 * missing operation scope with an HTTP 403, decided before JSON-RPC; `authorize` says it will be refused):
 * the call is counted, refused for the first reason met, and audited exactly as the pipeline would, and
 * never charged nor run. Returns the refusal; undefined if, against `authorize`, nothing refused it.
 */
export async function refuseBeforeDispatch(
  ctx: RequestContext,
  meta: ProcedureMeta | undefined,
  getRawInput: () => Promise<unknown>,
): Promise<DomainError | undefined> {
  try {
    await admit(ctx, meta, getRawInput, false);
    return undefined;
  } catch (err) {
    // steps 1–4 run no handler, so nothing here comes wrapped by a framework
    await auditCall(ctx, meta, { ok: false, error: err }, domainErrorOf);
    return domainErrorOf(err);
  }
}
