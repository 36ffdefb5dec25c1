import { Ajv } from 'ajv';
import { z } from 'zod';
import { listOf } from './schemas.js';

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false, unicodeRegExp: false });

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
  const validate = ajv.compile(z.toJSONSchema(schema, { io: 'output', target: 'draft-7', unrepresentable: 'throw' }));
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
