import type { RateLimiter } from '../src/auth/rateLimit.js';
import type { Credentials } from '../src/auth/credentials.js';
import type { AuthenticatedActor } from '../src/domain/actor.js';
import type { DomainError } from '../src/domain/errors.js';
import { newId } from '../src/domain/ids.js';
import type { Services } from '../src/domain/services.js';
import type { ResponseState } from '../src/procedures/context.js';
import { newResponseState, toDomainError, type ProcedureInfo, type RequestContext } from '../src/procedures/index.js';
import { IDEMPOTENCY_ARGUMENT } from './toolCatalog.js';

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
  | { ok: true; data: unknown; requestId: string; out: ResponseState }
  | { ok: false; error: DomainError; requestId: string; out: ResponseState };

/**
 * Calls a procedure as the MCP tool `proc.meta.tool.name`, exactly as REST does (`ProcedureInfo.call`, the
 * same procedure), so the pipeline authenticates, rate-limits, pins the audience to BASE_URL/mcp, checks
 * `mcp:tools` and the operation's scope, charges units, applies the idempotency key and writes one audit
 * row with surface `mcp`. `idempotencyKey` is taken out of the arguments and passed as the key.
 */
export async function invokeTool(proc: ProcedureInfo, args: Record<string, unknown>, o: ToolCallOptions): Promise<ToolOutcome> {
  const { ctx, input } = toolCallContext(proc, args, o);
  const name = proc.meta.tool.name;
  try {
    const data = await proc.call({ ctx, getRawInput: async () => input, signal: o.signal });
    return { ok: true, data, requestId: ctx.requestId, out: ctx.out };
  } catch (err) {
    const error = toDomainError(err);
    if (error.status >= 500) o.services.log.error({ err, requestId: ctx.requestId, tool: name }, 'tool call failed');
    return { ok: false, error, requestId: ctx.requestId, out: ctx.out };
  }
}

/** The context of a tool call (surface `mcp`) and its input, the `idempotencyKey` argument taken out as the key. */
export function toolCallContext(proc: ProcedureInfo, args: Record<string, unknown>, o: ToolCallOptions): { ctx: RequestContext; input: Record<string, unknown> } {
  const { [IDEMPOTENCY_ARGUMENT]: rawKey, ...input } = args;
  const name = proc.meta.tool.name;
  const ctx: RequestContext = {
    services: o.services, rateLimiter: o.rateLimiter, surface: 'mcp', requestId: o.requestId ?? newId('req'), method: 'TOOL',
    path: name, routePattern: name, clientIp: o.clientIp, credentials: o.credentials, authenticated: o.actor, out: newResponseState(),
  };
  if (proc.meta.kind === 'write' && rawKey !== undefined) {
    // a key that is not a string is rejected by the pipeline's key parser like a malformed header
    ctx.idempotencyKey = typeof rawKey === 'string' ? rawKey : '';
  } else if (rawKey !== undefined) {
    // reads take no key: leave it in, so the strict input schema reports it like any unknown argument
    input[IDEMPOTENCY_ARGUMENT] = rawKey;
  }
  return { ctx, input };
}
