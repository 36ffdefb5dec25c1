import { initTRPC } from '@trpc/server';
import { pipeline } from '../auth/pipeline.js';
import type { AuthenticatedActor } from '../domain/actor.js';
import { toDomainError } from './errors.js';
import type { RequestContext } from './context.js';
import type { ProcedureMeta } from './meta.js';

const t = initTRPC.context<RequestContext>().meta<ProcedureMeta>().create({ isServer: true });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The pipeline as one tRPC middleware: the chain of named steps in src/auth/pipeline.ts (authenticate,
 * authorize, input, meter, idempotency, the handler, audit). One level, not one per step: each middleware
 * level costs tRPC's own call loop two copies of the call options (src/fastpaths/invokeProcedure.ts avoids them for
 * the adapters, but `createCaller` still pays them). Typed as `next<{ actor }>()`, so handlers see `ctx.actor`.
 */
const spec55 = t.middleware(({ ctx, meta, next, getRawInput }) =>
  pipeline({
    ctx,
    meta,
    getRawInput,
    next: next as unknown as () => ReturnType<typeof next<{ actor: AuthenticatedActor }>>,
    replayed: (body) => ({ ok: true as const, data: body, ctx, marker: 'middlewareMarker' as never }),
    toError: toDomainError,
  }),
);

/** Every /v1 operation and MCP tool: the pipeline around the handler. */
export const apiProcedure = t.procedure.use(spec55);
/** Public operations (the OpenAPI document): no credential, no audit. */
export const publicProcedure = t.procedure;
