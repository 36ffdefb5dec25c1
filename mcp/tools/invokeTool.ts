import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Credentials } from '../../src/auth/credentials.js';
import type { AuthenticatedActor } from '../../src/domain/actor.js';
import { DomainError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import type { Services } from '../../src/domain/services.js';
import type { ResponseState } from '../../src/procedures/context.js';
import {
  newResponseState,
  toDomainError,
  type ProcedureInfo,
  type RequestContext,
} from '../../src/procedures/index.js';
import { explainValidation } from '../../src/procedures/validationHint.js';
import { IDEMPOTENCY_ARGUMENT } from './toolCatalog.js';
import { visibleUserNames } from '../../src/domain/access.js';
import {
  FIELDS_ARGUMENT,
  listFieldsOf,
  parseFields,
  shapeOf,
  userIdsOf,
  type Shape,
  type TextView,
} from './toolText.js';

/** What a tool call knows of the HTTP request that carried it. */
export interface ToolCallOptions {
  services: Services;
  rateLimiter: RateLimiter;
  credentials: Credentials;
  /** The actor the door authenticated from `credentials` for this HTTP request (not looked up twice). */
  actor?: AuthenticatedActor;
  clientIp: string;
  /** The HTTP request's id, when it carries this one call only; otherwise each call gets its own. */
  requestId?: string;
  signal?: AbortSignal;
}

export type ToolOutcome =
  /** `view`: what the result's text is made from besides the output (toolText.ts) */
  | { ok: true; data: unknown; requestId: string; out: ResponseState; view?: TextView }
  | { ok: false; error: DomainError; requestId: string; out: ResponseState };

/**
 * Calls a procedure as the MCP tool `proc.meta.tool.name`, exactly as REST does (`ProcedureInfo.call`, the
 * same procedure), so the pipeline authenticates, rate-limits, pins the audience to BASE_URL/mcp, checks
 * `mcp:tools` and the operation's scope, charges units, applies the idempotency key and writes one audit
 * row with surface `mcp`. `idempotencyKey` is taken out of the arguments and passed as the key.
 */
export async function invokeTool(
  proc: ProcedureInfo,
  args: Record<string, unknown>,
  o: ToolCallOptions,
): Promise<ToolOutcome> {
  const { ctx, input, fields: rawFields } = toolCallContext(proc, args, o);
  const name = proc.meta.tool.name;
  const valid = listFieldsOf(proc);
  const fields = rawFields === undefined || !valid ? undefined : parseFields(rawFields, valid);
  // a bad `fields` is refused before the call: nothing runs, nothing is charged
  if (fields instanceof DomainError) return { ok: false, error: fields, requestId: ctx.requestId, out: ctx.out };
  try {
    const data = await proc.call({ ctx, getRawInput: async () => input, signal: o.signal });
    const shape = shapeOf(proc.output);
    const named = namesIn(data, shape, o);
    const names = named instanceof Map ? named : await named;
    const view = { args: input, fields, omits: proc.meta.tool.textOmits, shape, names };
    return { ok: true, data, requestId: ctx.requestId, out: ctx.out, view };
  } catch (err) {
    const error = explainValidation(toDomainError(err), proc);
    if (error.status >= 500) o.services.log.error({ err, requestId: ctx.requestId, tool: name }, 'tool call failed');
    withRetryAfter(error, o.services.now());
    return { ok: false, error, requestId: ctx.requestId, out: ctx.out };
  }
}

/**
 * The names of the users an output's declared fields name, those the caller can see, for its text; a failed lookup
 * leaves the ids alone (the call succeeded). An output that names nobody is answered at once, without a lookup.
 */
function namesIn(data: unknown, shape: Shape, o: ToolCallOptions): Map<string, string> | Promise<Map<string, string>> {
  const ids = userIdsOf(data, shape);
  if (!ids.size || !o.actor) return new Map();
  return visibleUserNames(o.services.ds.manager, o.actor, ids).catch((err: unknown) => {
    o.services.log.warn({ err }, 'user names for a tool result failed');
    return new Map<string, string>();
  });
}

/**
 * An agent retries on its own: a refusal that lifts with time says when, in seconds (`details.retryAfterSeconds`),
 * as the rate limit's already does; spent monthly units lift at the next month's start.
 */
export function withRetryAfter(error: DomainError, now: Date): void {
  const details = error.details;
  if (
    error.code !== 'api_units_exhausted' ||
    !details ||
    details.retryAfterSeconds !== undefined ||
    typeof details.resetsAt !== 'string'
  )
    return;
  details.retryAfterSeconds = Math.max(1, Math.ceil((Date.parse(details.resetsAt) - now.getTime()) / 1000));
}

/** The context of a tool call (surface `mcp`) and its input, the `idempotencyKey` argument taken out as the key. */
export function toolCallContext(
  proc: ProcedureInfo,
  args: Record<string, unknown>,
  o: ToolCallOptions,
): { ctx: RequestContext; input: Record<string, unknown>; fields?: unknown } {
  const { [IDEMPOTENCY_ARGUMENT]: rawKey, ...input } = args;
  // a list tool's `fields` shapes the text of its result, not the procedure's input (toolText.ts)
  let fields: unknown;
  if (FIELDS_ARGUMENT in input && listFieldsOf(proc)) {
    fields = input[FIELDS_ARGUMENT];
    delete input[FIELDS_ARGUMENT];
  }
  const name = proc.meta.tool.name;
  const ctx: RequestContext = {
    services: o.services,
    rateLimiter: o.rateLimiter,
    surface: 'mcp',
    requestId: o.requestId ?? newId('req'),
    method: 'TOOL',
    path: name,
    routePattern: name,
    clientIp: o.clientIp,
    credentials: o.credentials,
    authenticated: o.actor,
    out: newResponseState(),
  };
  if (proc.meta.kind === 'write' && rawKey !== undefined) {
    // a key that is not a string is rejected by the pipeline's key parser like a malformed header
    ctx.idempotencyKey = typeof rawKey === 'string' ? rawKey : '';
  } else if (rawKey !== undefined) {
    // reads take no key: leave it in, so the strict input schema reports it like any unknown argument
    input[IDEMPOTENCY_ARGUMENT] = rawKey;
  }
  return { ctx, input, fields };
}
