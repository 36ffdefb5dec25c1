import { callTRPCProcedure, initTRPC, TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invokeProcedure, type ProcedureDef } from '../../src/fastpaths/invokeProcedure.js';

// invokeProcedure walks a procedure's middlewares itself (bench/README.md); every answer and every failure
// must be the one tRPC's own callTRPCProcedure gives for the same call.

interface Ctx {
  user: string;
  seen?: unknown[];
}
const t = initTRPC.context<Ctx>().meta<{ label: string }>().create({ isServer: true });

const outer = t.middleware(async ({ ctx, meta, path, type, input, signal, next }) => {
  ctx.seen?.push({ meta, path, type, input, aborted: signal?.aborted ?? null });
  if (ctx.user === 'nobody') return undefined as never; // a middleware that forgets `next`
  if (ctx.user === 'refused') throw new Error('refused by the middleware');
  return next({ ctx: { role: `role-of-${ctx.user}` } });
});
const inner = t.middleware(async ({ ctx, input, getRawInput, next }) => {
  ctx.seen?.push({ inner: { input, raw: await getRawInput(), role: (ctx as Ctx & { role?: string }).role } });
  const result = await next();
  ctx.seen?.push({ after: result.ok ? 'ok' : result.error.code });
  return result;
});

const appRouter = t.router({
  greet: t.procedure
    .meta({ label: 'greeting' })
    .use(outer)
    .input(z.object({ name: z.string(), mode: z.enum(['ok', 'throw', 'bad-output']).default('ok') }))
    .use(inner)
    .output(z.object({ text: z.string() }))
    .query(({ ctx, input }) => {
      if (input.mode === 'throw') throw new TRPCError({ code: 'CONFLICT', message: 'resolver refused' });
      if (input.mode === 'bad-output') return { text: 42 } as unknown as { text: string };
      return { text: `hello ${input.name}, ${ctx.role}` };
    }),
  change: t.procedure.input(z.object({ n: z.number() })).mutation(({ input }) => ({ doubled: input.n * 2 })),
  // two inputs, each parsed by its own schema and merged; a middleware between them swaps the raw input
  merged: t.procedure
    .input(z.object({ a: z.string() }))
    .use(({ next, getRawInput }) =>
      next({ getRawInput: async () => ({ ...((await getRawInput()) as object), b: 'swapped' }) }),
    )
    .input(z.object({ b: z.string().max(7) }))
    .output(z.object({ both: z.string() }))
    .query(({ input }) => ({ both: `${input.a}+${input.b}` })),
  // a parser zod can only run asynchronously (tRPC's parse falls back to parseAsync), and a primitive input
  later: t.procedure
    .input(z.object({ n: z.number() }).refine(async (v) => v.n > 0, 'n must be positive'))
    .output(z.object({ n: z.number() }).refine(async (v) => v.n < 100, 'n must stay under 100'))
    .query(({ input }) => ({ n: input.n * 10, internal: 'stripped by the output parser' })),
  plain: t.procedure.input(z.string().min(2)).query(({ input }) => input.toUpperCase()),
});

type Path = 'greet' | 'change' | 'merged' | 'later' | 'plain';
const defOf = (path: Path) => (appRouter._def.procedures[path] as unknown as { _def: ProcedureDef })._def;

/** Runs one call both ways and returns both outcomes, with what the middlewares saw. */
async function both(path: Path, user: string, raw: unknown, signal?: AbortSignal) {
  const run = async (f: (ctx: Ctx) => Promise<unknown>) => {
    const ctx: Ctx = { user, seen: [] };
    const outcome = await f(ctx).then(
      (data) => ({ ok: true, data }),
      (e: unknown) => ({
        ok: false,
        instance: e instanceof TRPCError,
        code: (e as TRPCError).code,
        message: (e as Error).message,
        cause: (e as TRPCError).cause?.constructor.name,
        causeMessage: (e as TRPCError).cause?.message,
      }),
    );
    return { outcome, seen: ctx.seen };
  };
  const type = defOf(path).type;
  const ours = await run((ctx) => invokeProcedure(path, defOf(path), { ctx, getRawInput: async () => raw, signal }));
  const theirs = await run((ctx) =>
    callTRPCProcedure({ router: appRouter, path, type, ctx, getRawInput: async () => raw, signal, batchIndex: 0 }),
  );
  return { ours, theirs };
}

describe('invokeProcedure runs a procedure exactly as callTRPCProcedure does', () => {
  it('passes meta, path, type, signal, context extensions, parsed and raw input down, and the result up', async () => {
    const { ours, theirs } = await both('greet', 'ada', { name: 'Ada' }, new AbortController().signal);
    expect(ours.outcome).toEqual({ ok: true, data: { text: 'hello Ada, role-of-ada' } });
    expect(ours).toEqual(theirs);
    expect(ours.seen).toEqual([
      { meta: { label: 'greeting' }, path: 'greet', type: 'query', input: undefined, aborted: false },
      { inner: { input: { name: 'Ada', mode: 'ok' }, raw: { name: 'Ada' }, role: 'role-of-ada' } },
      { after: 'ok' },
    ]);
    const m = await both('change', 'ada', { n: 21 });
    expect(m.ours.outcome).toEqual({ ok: true, data: { doubled: 42 } });
    expect(m.ours).toEqual(m.theirs);
    const j = await both('merged', 'ada', { a: 'x', b: 'y' });
    expect(j.ours.outcome).toEqual({ ok: true, data: { both: 'x+swapped' } });
    expect(j.ours).toEqual(j.theirs);
    const bad = await both('merged', 'ada', { b: 'y' });
    expect(bad.ours.outcome).toMatchObject({ ok: false, code: 'BAD_REQUEST', cause: 'ZodError' });
    expect(bad.ours).toEqual(bad.theirs);
  });

  it('runs an asynchronous parser and a primitive input alike, passing and failing', async () => {
    const cases: [Path, unknown][] = [
      ['later', { n: 5 }],
      ['later', { n: -1 }],
      ['later', { n: 50 }],
      ['later', 'not an object'],
      ['plain', 'ab'],
      ['plain', 'a'],
      ['plain', 7],
    ];
    const outcomes = [];
    for (const [path, raw] of cases) {
      const { ours, theirs } = await both(path, 'ada', raw);
      expect(ours, `${path} ${JSON.stringify(raw)}`).toEqual(theirs);
      outcomes.push(ours.outcome);
    }
    expect(outcomes.map((o) => ('data' in o ? o.data : (o as { code: string }).code))).toEqual([
      { n: 50 },
      'BAD_REQUEST',
      'INTERNAL_SERVER_ERROR',
      'BAD_REQUEST',
      'AB',
      'BAD_REQUEST',
      'BAD_REQUEST',
    ]);
  });

  it('fails alike: bad input, a refusing middleware, a throwing resolver, bad output, a middleware without next', async () => {
    const cases: [string, unknown, string][] = [
      ['ada', { name: 7 }, 'BAD_REQUEST'],
      ['refused', { name: 'Ada' }, 'INTERNAL_SERVER_ERROR'],
      ['ada', { name: 'Ada', mode: 'throw' }, 'CONFLICT'],
      ['ada', { name: 'Ada', mode: 'bad-output' }, 'INTERNAL_SERVER_ERROR'],
      ['nobody', { name: 'Ada' }, 'INTERNAL_SERVER_ERROR'],
    ];
    for (const [user, raw, code] of cases) {
      const { ours, theirs } = await both('greet', user, raw);
      expect(ours.outcome, JSON.stringify(raw)).toMatchObject({ ok: false, instance: true, code });
      expect(ours, `${user} ${JSON.stringify(raw)}`).toEqual(theirs);
    }
  });
});

describe("invokeProcedure follows tRPC's current middleware contract", () => {
  it('gives every middleware the options callTRPCProcedure gives, batchIndex included', async () => {
    const keysSeen: unknown[][] = [];
    const record = t.middleware(async (opts) => {
      const { next, ...rest } = opts;
      // (callTRPCProcedure spreads its own options into the middleware's, `router` among them: not in the contract)
      const keys = Object.keys(rest).filter((k) => k !== 'router');
      keysSeen.at(-1)!.push({ keys: keys.sort(), batchIndex: rest.batchIndex });
      return next();
    });
    const r = t.router({
      probe: t.procedure
        .use(record)
        .input(z.object({}))
        .use(record)
        .query(() => 'done'),
    });
    const def = (r._def.procedures.probe as unknown as { _def: ProcedureDef })._def;
    const getRawInput = async () => ({});
    keysSeen.push([]);
    await invokeProcedure('probe', def, { ctx: { user: 'ada' }, getRawInput, signal: undefined });
    keysSeen.push([]);
    await callTRPCProcedure({
      router: r,
      path: 'probe',
      type: 'query',
      ctx: { user: 'ada' },
      getRawInput,
      signal: undefined,
      batchIndex: 0,
    });
    expect(keysSeen[0]).toHaveLength(2);
    expect(keysSeen[0]).toEqual(keysSeen[1]);
  });
});
