import { describe, expect, it } from 'vitest';
import { GENERATE_COMMAND, replacePart, staleFiles } from '../../scripts/derived.js';

// Whatever is derived from the code (the event catalog from the operation modules, the migrations index, the typed
// client, the guides' tables and figures) is written by one command; this fails, naming it, while any is stale.

describe('the derived files', () => {
  it(`are what \`${GENERATE_COMMAND}\` writes`, { timeout: 60_000 }, async () => {
    const stale = (await staleFiles()).map((s) => s.file);
    expect(stale, `stale: run \`${GENERATE_COMMAND}\` and commit what it writes`).toEqual([]);
  });

  it('a guide whose generated part lost its markers is refused, not silently left stale', () => {
    const open = `<!-- generated: x (${GENERATE_COMMAND}) -->`;
    const close = '<!-- end of generated: x -->';
    expect(replacePart('a.md', `before\n${open}\nold\n${close}\nafter`, 'x', 'new')).toBe(
      `before\n${open}\nnew\n${close}\nafter`,
    );
    expect(() => replacePart('a.md', 'a table with no markers', 'x', 'new')).toThrow(/markers .* "x" are missing/);
  });
});
