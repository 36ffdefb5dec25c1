import { z } from 'zod';

/** A JSON Schema object as MCP tools carry it (`type: "object"` at the root, MCP spec "Tools"). */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, object>; required?: string[] } & Record<string, unknown>;

type Json = Record<string, unknown>;

/** Replaces every local `$ref` into `$defs` by a copy of its target, so tools carry self-contained schemas. */
function inline(node: unknown, defs: Record<string, unknown>, seen: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => inline(n, defs, seen));
  if (!node || typeof node !== 'object') return node;
  const obj = node as Json;
  const ref = typeof obj.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(obj.$ref)?.[1] : undefined;
  if (ref !== undefined && ref in defs) {
    // the schemas are trees; a cycle would mean a recursive type, which no procedure has
    if (seen.includes(ref)) throw new Error(`Recursive schema ${ref} cannot be inlined`);
    const { $ref: _ref, ...rest } = obj;
    return { ...(inline(defs[ref], defs, [...seen, ref]) as Json), ...(inline(rest, defs, seen) as Json) };
  }
  return Object.fromEntries(
    Object.entries(obj).filter(([k]) => k !== '$defs' && k !== '$schema').map(([k, v]) => [k, inline(v, defs, seen)]),
  );
}

/** Keywords whose value maps names to schemas (their keys are names, not keywords). */
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** Keywords whose value is data, not a schema. */
const VALUES = new Set(['examples', 'enum', 'const', 'default']);

/**
 * Standard JSON Schema 2020-12 keywords only, as MCP clients and models read them: OpenAPI's `example`
 * becomes `examples` (an array), vendor `x-…` keywords are dropped, and `format: "base64"` (no such format)
 * is dropped where `contentEncoding: "base64"` says it.
 */
function standardKeywords(node: unknown, named = false): unknown {
  if (Array.isArray(node)) return node.map((n) => standardKeywords(n));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (named) {
      out[k] = standardKeywords(v);
      continue;
    }
    if (k.startsWith('x-')) continue;
    if (k === 'example') {
      if (!('examples' in (node as Json))) out.examples = [v];
      continue;
    }
    if (VALUES.has(k)) {
      out[k] = v;
      continue;
    }
    if (k === 'format' && v === 'base64' && (node as Json).contentEncoding === 'base64') continue;
    out[k] = NAMED_SCHEMAS.has(k) ? standardKeywords(v, true) : standardKeywords(v);
  }
  return out;
}

/** `z.coerce.number()` has an unknown input type; tools receive JSON, so say what the procedure accepts. */
function coercedNumbers(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: Json }) {
  const def = ctx.zodSchema._zod.def;
  if (def.type === 'number' && 'coerce' in def && def.coerce) {
    const format = (ctx.zodSchema._zod as { bag?: { format?: string } }).bag?.format;
    ctx.jsonSchema.type = format?.includes('int') ? 'integer' : ctx.jsonSchema.type ?? 'number';
  }
}

/**
 * The JSON Schema (2020-12, inline: no `$ref`, no `$defs`) of a procedure's zod schema, as the input
 * (`io: 'input'`) or the output (`io: 'output'`) of an MCP tool. Null when the root is not an object,
 * which MCP cannot carry as `inputSchema`/`outputSchema`.
 */
export function toToolSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchemaObject | null {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: coercedNumbers }) as Json;
  const out = standardKeywords(inline(raw, (raw.$defs ?? {}) as Record<string, unknown>)) as Json;
  return out.type === 'object' ? (out as JsonSchemaObject) : null;
}
