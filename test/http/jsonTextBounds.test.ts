import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTextBoundsError } from '../../src/http/inputBounds.js';

const LIMITS = { maxDepth: 6, maxMembers: 40 } as Parameters<typeof jsonTextBoundsError>[1];

/** What the bounds say, as a comparable value: the refusal's reason, or null. */
const verdict = (text: string) => {
  const err = jsonTextBoundsError(Buffer.from(text), LIMITS);
  return err ? ((err as { details?: { reason?: string } }).details?.reason ?? err.message) : null;
};

/** The text with its strings emptied: what the bounds must read of it (brackets and commas outside strings only). */
const structureOf = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? '' : v)).replace(/"[^"]*"\s*:/g, '"":');

// strings made to hide structure: brackets, commas, quotes and backslashes, escaped runs of them, every length
// around where the short scan hands over to indexOf
const tricky = fc.string({
  unit: fc.constantFrom('a', '"', '\\', '{', '[', ',', ']', '}', 'é', '\\"', '\\\\'),
  maxLength: 120,
});
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.integer(),
    fc.array(tie('v'), { maxLength: 6 }),
    fc.dictionary(tricky, tie('v'), { maxKeys: 6 }),
  ),
})).v;

describe('jsonTextBoundsError', () => {
  it('reads the structure outside strings only, whatever the strings hold and however long they are', () => {
    fc.assert(
      fc.property(value, (v) => {
        // the same verdict as for the same structure with every string empty
        expect(verdict(JSON.stringify(v))).toBe(verdict(structureOf(v)));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds a closing quote after an escaped one and a run of backslashes, near and past the short scan', () => {
    for (const n of [0, 1, 46, 47, 48, 49, 50, 95, 200]) {
      const filler = 'x'.repeat(n);
      // a string hiding 7 levels of brackets, then 7 real levels: only the real ones count
      const hidden = JSON.stringify(`${filler}\\"[[[[[[[${filler}\\\\`);
      expect(verdict(`{"a":${hidden}}`)).toBeNull();
      expect(verdict(`{"a":${hidden},"b":[[[[[[[1]]]]]]]}`)).toBe('too_deep');
    }
  });

  it('ends a string at its closing quote at every distance from its start', () => {
    for (let n = 0; n <= 120; n++) {
      const s = 'x'.repeat(n);
      expect(verdict(`{"a":"${s}","b":[[[[[[[1]]]]]]]}`), `${n}`).toBe('too_deep');
      expect(verdict(`{"a":"${s}","b":"[[[[[[["}`), `${n}`).toBeNull();
    }
  });

  it('leaves an unterminated string to the parser', () => {
    for (const n of [0, 10, 47, 48, 49, 300]) expect(verdict(`{"a":"${'x'.repeat(n)}`)).toBeNull();
  });
});
