import { describe, expect, it } from 'vitest';
import { dumpCounts } from '../../bench/instructions.js';

// bench/instructions.ts reads a callgrind dump's totals by the names of its `events:` line: instructions alone, or
// with BENCH_CACHE_SIM=1 the cache misses too, whatever order callgrind writes them in.
describe('callgrind dump totals', () => {
  it('reads the instructions of a dump without the cache simulation, and no misses', () => {
    const counts = dumpCounts('version: 1\nevents: Ir\nfn=(1) main\n0 5\nsummary: 1234567\n', 'a');
    expect(counts.Ir).toBe(1234567);
    expect(counts.I1mr + counts.D1mr + counts.D1mw + counts.ILmr + counts.DLmr + counts.DLmw).toBe(0);
  });

  it('reads each event by its name when the caches are simulated', () => {
    const text = 'events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 900 300 200 40 30 20 3 2 1\n';
    expect(dumpCounts(text, 'b')).toEqual({
      Ir: 900,
      I1mr: 40,
      D1mr: 30,
      D1mw: 20,
      ILmr: 3,
      DLmr: 2,
      DLmw: 1,
      Bcm: 0,
      Bim: 0,
    });
  });

  it('reads the mispredicted branches when branches are simulated', () => {
    const counts = dumpCounts('events: Ir Bc Bcm Bi Bim\nsummary: 500 90 7 20 3\n', 'd');
    expect([counts.Ir, counts.Bcm, counts.Bim, counts.I1mr]).toEqual([500, 7, 3, 0]);
  });

  it('fails loudly on a file that is not a dump', () => {
    expect(() => dumpCounts('nothing here\n', 'c')).toThrow(/no events or summary line in c/);
  });
});
