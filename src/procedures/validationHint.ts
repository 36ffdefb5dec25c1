import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import type { ProcedureInfo } from './index.js';

// Validation errors an agent (or a person) can act on, on both surfaces: the REST answer and the MCP tool
// result carry the same message.
type JsonNode = {
  properties?: Record<string, JsonNode>;
  items?: JsonNode;
  anyOf?: JsonNode[];
  example?: unknown;
  examples?: unknown[];
  enum?: unknown[];
  type?: unknown;
  format?: string;
};
const inputSchemas = new WeakMap<object, JsonNode>();

/** A valid value of an argument (by its path in the input), from the schema's examples, enum or format. */
function exampleOf(proc: ProcedureInfo, path: string): unknown {
  let schema = inputSchemas.get(proc.input);
  if (!schema)
    inputSchemas.set(
      proc.input,
      (schema = z.toJSONSchema(proc.input, { io: 'input', unrepresentable: 'any' }) as JsonNode),
    );
  let node: JsonNode | undefined = schema;
  for (const seg of path.split('.')) {
    node = node?.anyOf?.find((a) => a.properties) ?? node;
    node = /^\d+$/.test(seg) ? node?.items : node?.properties?.[seg];
  }
  if (!node) return undefined;
  const alt = node.anyOf?.find((a) => a.type !== 'null') ?? node;
  if (alt.examples?.length) return alt.examples[0];
  if (alt.example !== undefined) return alt.example;
  if (alt.enum?.length) return alt.enum[0];
  if (alt.format === 'date') return '2026-12-01';
  if (alt.format === 'date-time') return '2026-11-22T09:30:00.000Z';
  return undefined;
}

/**
 * A schema refusal as a model can act on it: per argument, what was wrong and a valid value, a sentence each
 * (`roomId: must be a room_ identifier; for example "room_01…".`); an unknown argument names the valid ones.
 * Other errors pass unchanged.
 */
export function explainValidation(error: DomainError, proc: ProcedureInfo): DomainError {
  const issues = (error.details?.issues ?? []) as {
    path: string;
    code: string;
    message: string;
    keys?: string[];
    keyCount?: number;
  }[];
  if (error.code !== 'validation_error' || !Array.isArray(issues) || !issues.length) return error;
  const args = Object.keys(proc.input.shape);
  // one sentence per argument: its problems together, then one valid value
  const byPath = new Map<string, typeof issues>();
  for (const i of issues) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i]);
  const sentences = [...byPath.values()].slice(0, 5).map((group) => {
    const i = group[0];
    if (i.code === 'unrecognized_keys' && i.keys?.length) {
      const where = i.path ? `${i.path}: ` : '';
      // the details show a few of a flood of keys: the count says how many more there were
      const more =
        i.keyCount !== undefined && i.keyCount > i.keys.length ? ` (and ${i.keyCount - i.keys.length} more)` : '';
      const listed = `${i.keys.map((k) => JSON.stringify(k)).join(', ')}${more}`;
      return `${where}${listed} ${i.keys.length > 1 ? 'are not arguments' : 'is not an argument'} of ${proc.meta.tool.name}; valid ones are ${i.path ? 'in its schema' : args.join(', ')}.`;
    }
    const example = i.path ? exampleOf(proc, i.path) : undefined;
    const tail = example === undefined ? '' : `; for example ${JSON.stringify(example)}`;
    return `${i.path || '(arguments)'}: ${group.map((g) => g.message).join('; ')}${tail}.`;
  });
  const more = byPath.size > 5 ? ` (${byPath.size - 5} more in details.issues)` : '';
  return new DomainError('validation_error', `Invalid input: ${sentences.join(' ')}${more}`, {
    details: error.details,
    cause: error.cause,
  });
}
