// Mirrors @trpc/server@11.25.2: `callRecursive` and `createProcedureCaller` (dist/initTRPC-*.mjs), the loop a built
// procedure runs when `callTRPCProcedure` calls it. Paired test: test/fastpaths/invokeProcedure.test.ts (same
// outcomes as the library's own on a set of calls) and test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import { getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';

/** What every middleware of a procedure is given (tRPC's middleware options). */
interface MiddlewareOptions {
  ctx: unknown;
  type: 'query' | 'mutation';
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: unknown;
  signal: AbortSignal | undefined;
  next(opts?: { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> }): Promise<MiddlewareResult>;
}
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError; marker: string };
type Middleware = (opts: MiddlewareOptions) => Promise<MiddlewareResult>;

/** The part of a built procedure's definition this reads: its middlewares, in order, and its meta. */
export interface ProcedureDef {
  type: 'query' | 'mutation';
  meta?: unknown;
  middlewares: unknown[];
}

export interface InvokeOptions {
  ctx: unknown;
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
}

/**
 * Calls a built tRPC procedure as `callTRPCProcedure` does once it has found it: the middlewares of its
 * definition in order (the pipeline, the input parser, the output parser, the resolver), each given the
 * options above and `next`, which calls the following one with the context, input or raw input it passes;
 * a thrown error becomes the level's failed result (`getTRPCErrorFromUnknown`), and the outermost failure
 * is thrown. Only the copying differs: tRPC's loop builds each level's options with two nested Babel
 * `_objectSpread2` copies of the caller's options (a property descriptor and a `defineProperty` per key),
 * ~6 % of a `GET /v1/me`; here each level gets one object literal. The REST and MCP adapters reach every
 * procedure through this (`ProcedureInfo.call`), so their whole suites run over it.
 */
export async function invokeProcedure(path: string, def: ProcedureDef, o: InvokeOptions): Promise<unknown> {
  const middlewares = def.middlewares as Middleware[];
  const { type, meta } = def;
  const { signal } = o;
  const level = async (
    index: number,
    ctx: unknown,
    input: unknown,
    getRawInput: () => Promise<unknown>,
  ): Promise<MiddlewareResult> => {
    try {
      return await middlewares[index]({
        ctx,
        type,
        path,
        input,
        getRawInput,
        meta,
        signal,
        next: (n) =>
          level(
            index + 1,
            n?.ctx ? { ...(ctx as object), ...n.ctx } : ctx,
            n && 'input' in n ? n.input : input,
            n?.getRawInput ?? getRawInput,
          ),
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause), marker: 'middlewareMarker' };
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
