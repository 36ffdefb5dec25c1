import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// bench/stageCuts.patch adds points where a request naming one in its `X-Cut` header is answered at once, without
// its audit row or anything after it. It exists to be applied in a working tree for bench/stageCuts.ts and taken
// out again; the product's sources, and the limit's, must never carry it.

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'mcp', 'rest', 'db'];

const sourcesOf = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs|js)$/.test(f))
    .map((f) => path.join(dir, f));

describe("the bench's stage cuts (bench/stageCuts.patch)", () => {
  it('are not applied in the sources: no cut module, no X-Cut header read anywhere', () => {
    expect(fs.existsSync(path.join(ROOT, 'mcp/transport/_cut.ts'))).toBe(false);
    // the limit's copy of the points (bench/limit/limitServer.ts) is in the patch too: the limit stays bare
    const files = [...DIRS.flatMap(sourcesOf), 'bench/limit/limitServer.ts'];
    expect(files.length).toBeGreaterThan(100);
    const reading = files.filter((f) => /x-cut/i.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(reading).toEqual([]);
    // the patch itself still adds them (a patch that no longer does is no longer this one)
    expect(fs.readFileSync(path.join(ROOT, 'bench/stageCuts.patch'), 'utf8')).toMatch(/x-cut/);
  });
});
