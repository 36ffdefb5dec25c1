import { z } from 'zod';
import { modelTextOf } from '../../src/procedures/schemas.js';

/** A JSON Schema object as MCP tools carry it (`type: "object"` at the root, MCP spec "Tools"). */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, object>; required?: string[] } & Record<
  string,
  unknown
>;

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
    Object.entries(obj)
      .filter(([k]) => k !== '$defs' && k !== '$schema')
      .map(([k, v]) => [k, inline(v, defs, seen)]),
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
  const schema = ctx.zodSchema as unknown;
  if (schema instanceof z.ZodNumber && schema.def.coerce)
    ctx.jsonSchema.type = schema.format?.includes('int') ? 'integer' : (ctx.jsonSchema.type ?? 'number');
}

/**
 * The override of every tool schema: coerced numbers, and a field's model-facing text (`forModel`) in place of its
 * description.
 */
function toolOverride(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: Json }) {
  coercedNumbers(ctx);
  const text = modelTextOf(ctx.zodSchema as unknown as z.ZodType);
  if (!text) return;
  if (text.description === null) delete ctx.jsonSchema.description;
  else ctx.jsonSchema.description = text.description;
  if (text.default !== undefined) ctx.jsonSchema.default = text.default;
}

/**
 * Keywords a model reading an input schema gains nothing from (the server validates them and says so when a value
 * breaks one). `additionalProperties: false` goes too: an unknown argument is still refused (`validation_error`
 * naming it), and single-type dialects (some providers' function declarations) refuse the keyword.
 */
const INPUT_NOISE = new Set(['examples', 'pattern', 'minLength', 'maxLength']);
/** Keywords an output schema keeps: what a program reading `structuredContent` needs to trust its shape. */
const OUTPUT_KEPT = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'contentEncoding',
]);
const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * The compact form of a tool schema, for a model's context: outputs keep only their shape (types, enums,
 * required, nesting), inputs drop examples and patterns (ids, NUL guards, date regexes beside their
 * `format`) and zod's ±2^53 bounds. A nullable value stays an `anyOf` of single types: a `type` array is refused by
 * hosts that map tool schemas onto a single-type dialect (some providers' function declarations). The OpenAPI
 * document keeps the full form; both come from the same zod schema.
 */
function compact(node: unknown, io: 'input' | 'output', named = false): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, io));
  if (!node || typeof node !== 'object') return node;
  const src = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (named) {
      out[k] = compact(v, io);
      continue;
    }
    if (io === 'output' ? !OUTPUT_KEPT.has(k) : INPUT_NOISE.has(k) || (k === 'additionalProperties' && v === false))
      continue;
    if ((k === 'maximum' && v === SAFE_BOUND) || (k === 'minimum' && v === -SAFE_BOUND)) continue;
    if (k === 'description' && typeof v === 'string' && /^Identifier of an? /.test(v)) continue; // the name says it
    if (VALUES.has(k)) out[k] = v;
    else out[k] = compact(v, io, NAMED_SCHEMAS.has(k));
  }
  if (Array.isArray(out.anyOf) && typeof out.description === 'string')
    out.anyOf = out.anyOf.map((a) => {
      const { description: _description, ...rest } = a as Json;
      return rest;
    });
  return out;
}

/**
 * An output object as a model's context can afford it: every field named (`required`, so a program can
 * rely on each being there) and the nesting of its arrays and objects described; a scalar's type, enum and
 * nullability are the OpenAPI document's to state (a tool list pays for each of them on every tool).
 */
function outputShape(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(outputShape);
  if (!node || typeof node !== 'object') return node;
  const src = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'properties' && v && typeof v === 'object') {
      const nested = Object.entries(v as Json)
        .filter(([, p]) => isStructured(p))
        .map(([name, p]) => [name, outputShape(p)]);
      if (nested.length) out.properties = Object.fromEntries(nested);
    } else if (k === 'items') {
      // an array of scalars is an array: its items' type is the OpenAPI document's to state, as a scalar field's is
      if (isStructured(v)) out.items = outputShape(v);
    } else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out[k] = outputShape(v);
    else if (k === 'type' || k === 'required' || k === 'const') out[k] = v;
  }
  return out;
}

/** An array or an object, possibly nullable: its structure is part of an output's shape. */
const isStructured = (p: unknown): boolean => {
  const s = p as Json;
  const types = Array.isArray(s?.type) ? s.type : [s?.type];
  return (
    types.includes('object') ||
    types.includes('array') ||
    !!s?.properties ||
    !!s?.items ||
    (Array.isArray(s?.anyOf) && s.anyOf.some(isStructured))
  );
};

/**
 * The JSON Schema (2020-12, inline: no `$ref`, no `$defs`) of a procedure's zod schema, as the input
 * (`io: 'input'`) or the output (`io: 'output'`) of an MCP tool, in the compact form a model reads.
 * Null when the root is not an object, which MCP cannot carry as `inputSchema`/`outputSchema`.
 */
export function toToolSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  o: { compact?: boolean } = {},
): JsonSchemaObject | null {
  // `compact: false`: every keyword OpenAPI states (patterns, examples, bounds, descriptions), for tools that
  // generate arguments
  if (o.compact === false) {
    const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: coercedNumbers }) as Json;
    const full = standardKeywords(inline(raw, (raw.$defs ?? {}) as Record<string, unknown>)) as Json;
    return full.type === 'object' ? (full as JsonSchemaObject) : null;
  }
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: toolOverride }) as Json;
  const full = compact(standardKeywords(inline(raw, (raw.$defs ?? {}) as Record<string, unknown>)), io);
  const out = (io === 'output' ? outputShape(full) : full) as Json;
  return out.type === 'object' ? (out as JsonSchemaObject) : null;
}
