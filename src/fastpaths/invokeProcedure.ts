// Mirrors @trpc/server@11.25.2: `callRecursive` and `createProcedureCaller` (dist/initTRPC-*.mjs), the loop a built
// procedure runs when `callTRPCProcedure` calls it. Paired test: test/fastpaths/invokeProcedure.test.ts (same
// outcomes as the library's own on a set of calls) and test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import {
  getTRPCErrorFromUnknown,
  TRPCError,
  type AnyTRPCMiddlewareFunction,
  type AnyTRPCProcedure,
} from '@trpc/server';

/** What a middleware returns, and what its `next` resolves to (tRPC's middleware result). */
type MiddlewareResult = Awaited<ReturnType<AnyTRPCMiddlewareFunction>>;
/** The options tRPC gives every middleware (its public `TRPCMiddlewareFunction` type), `next` included. */
type MiddlewareOptions = Parameters<AnyTRPCMiddlewareFunction>[0];

/** The part of a built procedure's definition this reads: its middlewares, in order, and its meta. */
export interface ProcedureDef {
  type: 'query' | 'mutation';
  meta?: unknown;
  middlewares: unknown[];
}

/**
 * A built procedure's definition with what tRPC keeps on it undeclared (its `_def` types only `type`, `meta`
 * and `inputs`): the middlewares this file runs, and the output parser the OpenAPI document and MCP read.
 */
export function procedureDefOf<Output>(proc: AnyTRPCProcedure): ProcedureDef & { output: Output } {
  return proc._def as unknown as ProcedureDef & { output: Output };
}

export interface InvokeOptions {
  ctx: unknown;
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
}

/** svc calls one procedure per request: the call is always the first and only one of its batch. */
const BATCH_INDEX = 0;

/**
 * Calls a built tRPC procedure as `callTRPCProcedure` does once it has found it: the middlewares of its
 * definition in order (the pipeline, the input parser, the output parser, the resolver), each given tRPC's
 * middleware options and `next`, which calls the following one with the context, input or raw input it
 * passes; a thrown error becomes the level's failed result (`getTRPCErrorFromUnknown`), and the outermost
 * failure is thrown. Only the copying differs: tRPC's loop builds each level's options with two nested object
 * spreads of the caller's options (compiled to property-by-property copies); here each level gets one object
 * literal. The REST and MCP adapters reach every procedure through this (`ProcedureInfo.call`), so their
 * whole suites run over it.
 */
export async function invokeProcedure(path: string, def: ProcedureDef, o: InvokeOptions): Promise<unknown> {
  const middlewares = def.middlewares as AnyTRPCMiddlewareFunction[];
  const { type, meta } = def;
  const { signal } = o;
  const level = async (
    index: number,
    ctx: unknown,
    input: unknown,
    getRawInput: () => Promise<unknown>,
  ): Promise<MiddlewareResult> => {
    const next = (n?: { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> }) =>
      level(
        index + 1,
        n?.ctx ? { ...(ctx as object), ...n.ctx } : ctx,
        n && 'input' in n ? n.input : input,
        n?.getRawInput ?? getRawInput,
      );
    const opts: MiddlewareOptions = {
      ctx,
      type,
      path,
      input,
      getRawInput,
      meta,
      signal,
      batchIndex: BATCH_INDEX,
      next: next as MiddlewareOptions['next'],
    };
    try {
      return await middlewares[index](opts);
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause), marker: 'middlewareMarker' } as MiddlewareResult;
    }
  };
  const result = await level(0, o.ctx, undefined, o.getRawInput);
  if (!result)
    throw new TRPCError({
      code: 'INTERNAL_SERVER_ERROR',
      message: 'No result from middlewares - did you forget to `return next()`?',
    });
  if (!result.ok) throw result.error;
  return result.data;
}
