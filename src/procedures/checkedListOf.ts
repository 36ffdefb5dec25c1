import { Ajv } from 'ajv';
import { z } from 'zod';
import { listOf } from './schemas.js';

/** How `idOf` (schemas.ts) writes an identifier's pattern: `^<prefix>_[0-9A-Za-z]{1,64}$`. */
const ID_PATTERN = /^\^([a-z]+)_\[0-9A-Za-z\]\{1,64\}\$$/;

/** The longest id `idOf`'s pattern accepts for a prefix: the prefix, `_` and 64 letters or digits. */
const idMaxLength = (prefix: string) => prefix.length + 1 + 64;

const isAlphanumeric = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * The test of an identifier's pattern, as the regular expression decides it: the prefix and `_`, then 1–64 ASCII
 * letters and digits, nothing after. A list repeats ids (a page's room, its authors): the last one accepted is
 * accepted again at a glance. A loop over char codes instead of a call into the regular expression engine for
 * each of a page's ids; test/rest/outputCheck.test.ts holds the two to agreement.
 */
export function idPatternTest(prefix: string, pattern: string): { test(s: string): boolean; toString(): string } {
  const head = `${prefix}_`;
  const min = head.length + 1;
  const max = idMaxLength(prefix);
  // (no string at first: an empty one would be taken for an id already accepted)
  let last: string | undefined;
  return {
    test(s: string): boolean {
      if (s === last) return true;
      if (s.length < min || s.length > max || !s.startsWith(head)) return false;
      for (let i = head.length; i < s.length; i++) if (!isAlphanumeric(s.charCodeAt(i))) return false;
      last = s;
      return true;
    },
    // Ajv keeps one compiled pattern per distinct text: its key
    toString: () => `/${pattern}/`,
  };
}

/** Ajv's `code.regExp`: an identifier's pattern tested by `idPatternTest`, any other by a RegExp. */
const regExp = Object.assign(
  (pattern: string, flags: string) => {
    const id = ID_PATTERN.exec(pattern);
    return id ? idPatternTest(id[1], pattern) : new RegExp(pattern, flags);
  },
  // (`code` names the engine in the standalone code Ajv can write; nothing here writes any)
  { code: 'new RegExp' },
);

/**
 * The list's JSON Schema without the `maxLength` an identifier's pattern already bounds (`idOf` writes both): Ajv
 * checks a `maxLength` by counting the string's code points, a loop over every id of a page, where the pattern's test
 * (`idPatternTest`) has its length at once. Any other `maxLength`, or one shorter than the pattern allows, stays.
 */
export function withoutBoundedLengths(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutBoundedLengths);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = withoutBoundedLengths(v);
  const id = typeof out.pattern === 'string' ? ID_PATTERN.exec(out.pattern) : null;
  if (id && typeof out.maxLength === 'number' && out.maxLength >= idMaxLength(id[1])) delete out.maxLength;
  return out;
}

const ajv = new Ajv({
  strict: false,
  validateFormats: false,
  allErrors: false,
  unicodeRegExp: false,
  code: { regExp },
});

/**
 * `listOf(item)` for a list operation's `.output()`, with a cheaper output check on the hot path: the
 * validator Ajv compiles (once, at start) from the list's own JSON Schema (`z.toJSONSchema`, the output
 * side: the shapes the OpenAPI document and the MCP tools publish). zod's `parse` of a page of 50 cost about as
 * much as serializing it (it rebuilds every object); a value the compiled check accepts is exactly what zod
 * would return (the views build their objects with the schema's keys in its order, and the JSON Schema refuses
 * any other key), so it is returned as it is. Anything it refuses goes to zod's own `parse`, so a failure is
 * zod's error as before (tRPC answers it "Output validation failed", a 500), and whatever zod would accept
 * still comes out as zod makes it. The schema object itself is unchanged for OpenAPI and MCP.
 * test/procedures/outputCheck.test.ts holds the two checks to agreement.
 */
export function checkedListOf<T extends z.ZodType>(item: T) {
  const schema = listOf(item);
  const validate = ajv.compile(
    withoutBoundedLengths(
      z.toJSONSchema(schema, { io: 'output', target: 'draft-7', unrepresentable: 'throw' }),
    ) as object,
  );
  const zodParse = schema.parse.bind(schema);
  Object.defineProperty(schema, 'parse', {
    value: (value: unknown, params?: Parameters<typeof zodParse>[1]) =>
      validate(value) ? (value as z.infer<typeof schema>) : zodParse(value, params),
    enumerable: false,
    configurable: true,
    writable: true,
  });
  Object.defineProperty(schema, COMPILED_CHECK, { value: validate, enumerable: false });
  return schema;
}

/** Where `checkedListOf` keeps the compiled check on its schema (for the test that compares it with zod). */
export const COMPILED_CHECK = Symbol.for('svc.compiledOutputCheck');
