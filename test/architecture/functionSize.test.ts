import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint, Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A function of `lines` lines as ESLint counts them (its first and last line included). */
const functionOf = (lines: number) =>
  `export function f() {\n  let x = 0;\n${'  x += 1;\n'.repeat(lines - 4)}  return x;\n}\n`;

describe('functions a reader can hold', () => {
  it('are held by lint in src/, mcp/ and rest/: a function of 121 lines is refused, one of 120 passes', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    for (const file of ['src/main.ts', 'mcp/discovery.ts', 'rest/openapi.ts']) {
      const rule = (await eslint.calculateConfigForFile(file)).rules['max-lines-per-function'];
      expect(rule, file).toBeDefined();
      const linter = new Linter({ configType: 'flat' });
      const errorsAt = (lines: number) =>
        linter.verify(functionOf(lines), { rules: { 'max-lines-per-function': rule } }).map((m) => m.ruleId);
      expect(errorsAt(120), file).toEqual([]);
      expect(errorsAt(121), file).toEqual(['max-lines-per-function']);
    }
  });
});
