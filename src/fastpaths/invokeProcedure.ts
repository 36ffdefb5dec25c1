// Mirrors @trpc/server@11.25.2: `callRecursive` and `createProcedureCaller` (dist/initTRPC-*.mjs), the loop a built
// procedure runs when `callTRPCProcedure` calls it. Paired test: test/fastpaths/invokeProcedure.test.ts (same
// outcomes as the library's own on a set of calls) and test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import {
  getTRPCErrorFromUnknown,
  TRPCError,
  type AnyTRPCMiddlewareFunction,
  type AnyTRPCProcedure,
} from '@trpc/server';
import { getParseFn } from '@trpc/server/unstable-core-do-not-import';

/** What a middleware returns, and what its `next` resolves to (tRPC's middleware result). */
type MiddlewareResult = Awaited<ReturnType<AnyTRPCMiddlewareFunction>>;
/** The options tRPC gives every middleware (its public `TRPCMiddlewareFunction` type), `next` included. */
type MiddlewareOptions = Parameters<AnyTRPCMiddlewareFunction>[0];

/** The part of a built procedure's definition this reads: its middlewares, in order, and its meta. */
export interface ProcedureDef {
  type: 'query' | 'mutation';
  meta?: unknown;
  middlewares: unknown[];
  /** The input parsers, in the order of their middlewares; the output parser. */
  inputs?: unknown[];
  output?: unknown;
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

/** tRPC's `isObject` (what its input middleware merges). */
const isObject = (v: unknown): v is object => !!v && !Array.isArray(v) && typeof v === 'object';

/**
 * A level of the chain: a middleware to call with the options, or one of tRPC's own parser middlewares
 * (`createInputMiddleware`, `createOutputMiddleware`: `_type` 'input' and 'output') run here inline, with the parse
 * function tRPC would have given it (`getParseFn` of the same parser), the same steps and the same errors.
 */
type Level =
  | { kind: 'call'; fn: AnyTRPCMiddlewareFunction }
  | { kind: 'input'; parse: (value: unknown) => unknown }
  | { kind: 'output'; parse: (value: unknown) => unknown };

const plans = new WeakMap<ProcedureDef, Level[]>();

/**
 * The levels of a definition: its parser middlewares inline when they pair one to one with the parsers the
 * definition keeps (`inputs` in order, one `output`), every middleware called as it is otherwise.
 */
function planOf(def: ProcedureDef): Level[] {
  let plan = plans.get(def);
  if (plan) return plan;
  const middlewares = def.middlewares as (AnyTRPCMiddlewareFunction & { _type?: string })[];
  const inputs = def.inputs ?? [];
  const inputLevels = middlewares.filter((m) => m._type === 'input').length;
  const outputLevels = middlewares.filter((m) => m._type === 'output').length;
  const inline = inputLevels === inputs.length && (outputLevels === 0 || (outputLevels === 1 && !!def.output));
  let nextInput = 0;
  plan = middlewares.map((fn): Level => {
    if (inline && fn._type === 'input') return { kind: 'input', parse: getParseFn(inputs[nextInput++] as never) };
    if (inline && fn._type === 'output') return { kind: 'output', parse: getParseFn(def.output as never) };
    return { kind: 'call', fn };
  });
  plans.set(def, plan);
  return plan;
}

/**
 * Calls a built tRPC procedure as `callTRPCProcedure` does once it has found it: the middlewares of its
 * definition in order (the pipeline, the input parser, the output parser, the resolver), each given tRPC's
 * middleware options and `next`, which calls the following one with the context, input or raw input it
 * passes; a thrown error becomes the level's failed result (`getTRPCErrorFromUnknown`), and the outermost
 * failure is thrown. Only the copying differs: tRPC's loop builds each level's options with two nested object
 * spreads of the caller's options (compiled to property-by-property copies); here each level gets one object
 * literal, and tRPC's two parser middlewares, which read nothing of those options but the raw and parsed input,
 * get none: their steps run inline (`planOf`). The REST and MCP adapters reach every procedure through this
 * (`ProcedureInfo.call`), so their whole suites run over it.
 */
export async function invokeProcedure(path: string, def: ProcedureDef, o: InvokeOptions): Promise<unknown> {
  const plan = planOf(def);
  const { type, meta } = def;
  const { signal } = o;
  const level = async (
    index: number,
    ctx: unknown,
    input: unknown,
    getRawInput: () => Promise<unknown>,
  ): Promise<MiddlewareResult> => {
    const step = plan[index];
    try {
      if (step.kind === 'input') {
        // createInputMiddleware: the raw input parsed (a failure is BAD_REQUEST), merged over an object input
        let parsed: unknown;
        const raw = await getRawInput();
        try {
          parsed = await step.parse(raw);
        } catch (cause) {
          throw new TRPCError({ code: 'BAD_REQUEST', cause });
        }
        const combined = isObject(input) && isObject(parsed) ? { ...input, ...parsed } : parsed;
        return await level(index + 1, ctx, combined, getRawInput);
      }
      if (step.kind === 'output') {
        // createOutputMiddleware: a successful result's data parsed (a failure is an internal error)
        const result = await level(index + 1, ctx, input, getRawInput);
        if (!result.ok) return result;
        try {
          const data = await step.parse(result.data);
          return { ...result, data };
        } catch (cause) {
          throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
        }
      }
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
      return await step.fn(opts);
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
