import { describe, expect, it } from 'vitest';
import { BENCH_VARIANT_HEADER, productScenarios } from '../../bench/httpScenarios.js';
import type { BenchWorld } from '../../bench/seedBench.js';

// bench/httpScenarios.ts: `name@v` is scenario `name` with `X-Bench-Variant: v`, for an A/B of a scratch change in one
// server process (bench/README.md, "How to run").
const world = new Proxy({} as BenchWorld, { get: (_, k) => (k === 'apiKey' ? 'svc_test_key' : `id_${String(k)}`) });

describe('bench scenarios by variant', () => {
  it('sends the same request with the variant header, and leaves the plain scenario alone', () => {
    const [plain, off] = productScenarios(world, 'secret', ['mcp-get-me', 'mcp-get-me@off']);
    expect(plain.target.headers?.[BENCH_VARIANT_HEADER]).toBeUndefined();
    expect(off.name).toBe('mcp-get-me@off');
    expect(off.target).toEqual({
      ...plain.target,
      headers: { ...plain.target.headers, [BENCH_VARIANT_HEADER]: 'off' },
    });
    expect(() => productScenarios(world, 'secret', ['nothing@off'])).toThrow(/unknown scenario/);
  });
});
