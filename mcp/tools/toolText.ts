import { z } from 'zod';
import { DomainError } from '../../src/domain/errors.js';
import type { ProcedureInfo } from '../../src/procedures/index.js';

/**
 * The text block of a tool result: what a model reads, paid per token. `structuredContent` keeps the
 * procedure's output as it is (programs read it, the output schema validates it); the text says the same
 * compactly: a list as one header and one line per item, with the fields the caller already knows (its own
 * arguments), nulls, empty strings and defaults left out, columns equal on every row said once, and user ids named once
 * (`users: Alice=usr_…`) so rows carry the name. Dates stay ISO 8601 as stored.
 */

/** The argument of a list tool choosing the fields its text shows (the model's budget, with `limit`). */
export const FIELDS_ARGUMENT = 'fields';

/** Values a field takes unless something is special about the row: left out of the text like nulls. */
const DEFAULTS: Record<string, unknown> = { postedBy: 'user', roomType: 0 };

/** A field naming a user: its text column drops the `Id` and shows the user's name. */
const isUserField = (key: string, value: unknown) =>
  typeof value === 'string' && value.startsWith('usr_') && /Id$/.test(key);
const userColumn = (key: string) => key.replace(/I[dD]$/, '');

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The list envelope (`{data, nextCursor}`), which is shown as a table. */
export const isListOutput = (v: unknown): v is { data: Record<string, unknown>[]; nextCursor: string | null } =>
  isObject(v) && Array.isArray(v.data) && 'nextCursor' in v && v.data.every(isObject);

/** The item fields of a list procedure's output (what `fields` may name); null when the output is not a list. */
export function listFieldsOf(proc: ProcedureInfo): readonly string[] | null {
  const cached = itemFields.get(proc.output);
  if (cached !== undefined) return cached;
  const out = proc.output as z.ZodType;
  let fields: string[] | null = null;
  if (out instanceof z.ZodObject && out.shape.data instanceof z.ZodArray && 'nextCursor' in out.shape) {
    const item = out.shape.data.element;
    if (item instanceof z.ZodObject) fields = Object.keys(item.shape);
  }
  itemFields.set(proc.output, fields);
  return fields;
}
const itemFields = new WeakMap<object, readonly string[] | null>();

/**
 * The `fields` argument as a list of item fields, or a validation error naming the argument, what was wrong
 * and a valid example (only the fields of the output schema exist: nothing else of a row can be reached).
 */
export function parseFields(raw: unknown, valid: readonly string[]): string[] | DomainError {
  const example = valid.slice(0, 3).join(',');
  const fail = (problem: string) =>
    new DomainError(
      'validation_error',
      `Invalid input: fields: ${problem}. Valid fields are ${valid.join(', ')}. Example: "${example}".`,
      {
        details: { issues: [{ path: FIELDS_ARGUMENT, code: 'invalid_value', message: problem }], valid, example },
      },
    );
  if (typeof raw !== 'string') return fail('must be a comma-separated string of field names');
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (!names.length) return fail('is empty');
  const unknown = names.filter((n) => !valid.includes(n));
  if (unknown.length) return fail(`unknown field ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
  return [...new Set(names)];
}

/**
 * What of an output the text may rewrite, read from its schema: the fields it declares (an object's, an array's
 * items), down to their values. A free-form value (`z.unknown()`, a record, anything not declared field by field:
 * an agent run's `output`) is shown as it is, never rewritten: whoever wrote it chose what it says, and a user id
 * in it is not a claim of svc's.
 */
export type Shape = { fields: Record<string, Shape> } | { items: Shape } | 'value' | 'free';

const shapes = new WeakMap<object, Shape>();

export function shapeOf(schema: unknown): Shape {
  if (!(schema instanceof z.ZodType)) return 'free';
  const cached = shapes.get(schema);
  if (cached) return cached;
  let shape: Shape;
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodReadonly
  )
    shape = shapeOf(schema.unwrap());
  else if (schema instanceof z.ZodObject)
    shape = { fields: Object.fromEntries(Object.entries(schema.shape).map(([k, v]) => [k, shapeOf(v)])) };
  else if (schema instanceof z.ZodArray) shape = { items: shapeOf(schema.element) };
  else if (
    schema instanceof z.ZodString ||
    schema instanceof z.ZodNumber ||
    schema instanceof z.ZodBoolean ||
    schema instanceof z.ZodEnum ||
    schema instanceof z.ZodLiteral ||
    schema instanceof z.ZodNull
  )
    shape = 'value';
  else shape = 'free';
  shapes.set(schema, shape);
  return shape;
}

const fieldShape = (shape: Shape | undefined, key: string): Shape =>
  shape && typeof shape === 'object' && 'fields' in shape ? (shape.fields[key] ?? 'free') : 'free';
const itemShape = (shape: Shape | undefined): Shape =>
  shape && typeof shape === 'object' && 'items' in shape ? shape.items : 'free';
/** A declared field naming a user: its text column drops the `Id` and shows the user's name. */
const namesUser = (shape: Shape | undefined, key: string, value: unknown) =>
  fieldShape(shape, key) === 'value' && isUserField(key, value);

/** User ids named by declared `…Id` fields anywhere in an output (authors, assignees, creators…). */
export function userIdsOf(v: unknown, shape: Shape, into = new Set<string>()): Set<string> {
  if (shape === 'free' || shape === 'value') return into;
  if (Array.isArray(v)) for (const x of v) userIdsOf(x, itemShape(shape), into);
  else if (isObject(v)) {
    // (`for…in`, not `Object.entries`: the same keys in the same order on these plain objects, without an array a key)
    for (const k in v) {
      const x = v[k];
      if (namesUser(shape, k, x)) into.add(x as string);
      else if (x && typeof x === 'object') userIdsOf(x, fieldShape(shape, k), into);
    }
  }
  return into;
}

/** What the text of one result is made from besides the output. */
export interface TextView {
  /** The call's arguments: a field equal to one of them is known to the caller. */
  args: Record<string, unknown>;
  /** The item fields the caller chose for a list (`fields`), in its order. */
  fields?: readonly string[];
  /**
   * Item fields the text leaves out unless `fields` names them (the procedure's `tool.textOmits`); the text says so.
   */
  omits?: readonly string[];
  /** User id → name, for the users the caller can see (`visibleUserNames`). */
  names: ReadonlyMap<string, string>;
  /** What of the output its schema declares (`shapeOf`): only declared fields are rewritten. */
  shape: Shape;
}

/**
 * A cell or a value: strings as they are unless they would blur the line (then JSON), nested values as compact
 * JSON without what their row already says (`row`: a search hit's roomId and createdAt).
 */
function cell(v: unknown, view: TextView, shape: Shape, row: Record<string, unknown> = {}): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return /^$|^[\s"]|\s$|[|\n\r\u2028\u2029]/.test(v) ? JSON.stringify(v) : v;
  if (typeof v === 'object') return JSON.stringify(compactValue(v, view, shape, row));
  return String(v);
}

/** An instant as stored: ISO 8601 UTC with milliseconds. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * A nested value without nulls, empty strings and defaults, user ids of declared fields as `Name (usr_…)`; a
 * free-form value as it is.
 */
function compactValue(v: unknown, view: TextView, shape: Shape, known: Record<string, unknown> = {}): unknown {
  if (shape === 'free') return v;
  if (Array.isArray(v)) return v.map((x) => compactValue(x, view, itemShape(shape)));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const x = v[k];
    if (x === null || x === undefined || x === '' || DEFAULTS[k] === x || (k in known && known[k] === x)) continue;
    if (k === 'updatedAt' && x === v.createdAt) continue;
    if (namesUser(shape, k, x)) {
      const name = view.names.get(x as string);
      out[userColumn(k)] = name ? `${name} (${x as string})` : x;
    } else out[k] = compactValue(x, view, fieldShape(shape, k));
  }
  return out;
}

/** Names for the legend, unique: a second user of the same name is told apart by their id. */
function legendOf(ids: Set<string>, names: ReadonlyMap<string, string>): { label: Map<string, string>; line: string } {
  const label = new Map<string, string>();
  const taken = new Map<string, number>();
  for (const id of ids) {
    const name = names.get(id);
    if (!name) continue;
    taken.set(name, (taken.get(name) ?? 0) + 1);
  }
  const parts: string[] = [];
  for (const id of ids) {
    const name = names.get(id);
    if (!name) continue;
    const shown = (taken.get(name) ?? 0) > 1 || /[|,=\n]/.test(name) ? `${JSON.stringify(name)}#${id.slice(-4)}` : name;
    label.set(id, shown);
    parts.push(`${shown}=${id}`);
  }
  return { label, line: parts.length ? `users: ${parts.join(', ')}` : '' };
}

/**
 * A list as text: a header (count, where to go on, what every row shares), the user legend, the columns, one line a
 * row.
 */
function listText(list: { data: Record<string, unknown>[]; nextCursor: string | null }, view: TextView): string {
  const rows = list.data;
  const rowShape = itemShape(fieldShape(view.shape, 'data'));
  const isUserColumn = (k: string, v: unknown) => namesUser(rowShape, k, v);
  const header = [`${rows.length} item${rows.length === 1 ? '' : 's'}`];
  header.push(list.nextCursor ? `truncated: more with cursor=${list.nextCursor}` : 'last page');
  if (!rows.length) return header.join('; ');
  const omitted = view.fields ? [] : (view.omits ?? []).filter((k) => rows.some((r) => k in r));
  const keys = view.fields ?? [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !omitted.includes(k));
  const value = (r: Record<string, unknown>, k: string) => {
    const v = r[k];
    if (view.fields) return v ?? null;
    if (v === null || v === undefined || v === '' || DEFAULTS[k] === v) return null;
    if (k === 'updatedAt' && v === r.createdAt) return null;
    return v;
  };
  const columns: string[] = [];
  const shared: string[] = [];
  const userIds = new Set<string>();
  for (const k of keys) {
    const values = rows.map((r) => value(r, k));
    if (!view.fields) {
      if (values.every((v) => v === null)) continue;
      if (k in view.args && values.every((v) => v === view.args[k])) continue; // the caller asked for it
    }
    for (const v of values) if (isUserColumn(k, v)) userIds.add(v as string);
    for (const v of values) if (v && typeof v === 'object') userIdsOf(v, fieldShape(rowShape, k), userIds);
    if (!view.fields && rows.length > 1 && values.every((v) => v === values[0]) && typeof values[0] !== 'object') {
      shared.push(k);
      continue;
    }
    columns.push(k);
  }
  const { label, line: legend } = legendOf(userIds, view.names);
  // a time column whose values share a day says the day once, in its heading, and each row the time (ISO 8601 both)
  const day = new Map<string, string>();
  for (const k of columns) {
    const values = rows.map((r) => value(r, k));
    const first = values.find((v) => v !== null);
    const d = typeof first === 'string' && ISO_INSTANT.test(first) ? first.slice(0, 10) : undefined;
    if (d && values.every((v) => v === null || (typeof v === 'string' && ISO_INSTANT.test(v) && v.startsWith(d))))
      day.set(k, d);
  }
  const show = (k: string, v: unknown) => {
    if (isUserColumn(k, v)) return label.get(v as string) ?? (v as string);
    if (day.has(k) && typeof v === 'string') return v.slice(11);
    return cell(v, view, fieldShape(rowShape, k), rowOf.get(v as object));
  };
  const rowOf = new WeakMap<object, Record<string, unknown>>();
  for (const r of rows) for (const v of Object.values(r)) if (v && typeof v === 'object') rowOf.set(v, r);
  const head = (k: string) => {
    const name = rows.some((r) => isUserColumn(k, r[k])) ? userColumn(k) : k;
    return day.has(k) ? `${name} on ${day.get(k)}` : name;
  };
  if (shared.length)
    header.push(
      `all rows: ${shared.map((k) => `${rows.some((r) => isUserColumn(k, r[k])) ? userColumn(k) : k}=${isUserColumn(k, value(rows[0], k)) ? show(k, value(rows[0], k)) : cell(value(rows[0], k), view, fieldShape(rowShape, k))}`).join(', ')}`,
    );
  if (omitted.length) header.push(`not shown: ${omitted.join(', ')} (ask with fields)`);
  const lines = [header.join('; ')];
  if (legend) lines.push(legend);
  lines.push(columns.map(head).join('|'));
  for (const r of rows) lines.push(columns.map((k) => show(k, value(r, k))).join('|'));
  return lines.join('\n');
}

/**
 * The text block of a successful object output: a list as a table, anything else as compact JSON. Never
 * longer than the JSON of the output itself (`json`), which it falls back to.
 */
export function resultText(data: Record<string, unknown>, json: string, view: TextView): string {
  const text = isListOutput(data)
    ? listText(data, view)
    : JSON.stringify(compactValue(data, view, view.shape, view.args));
  return text.length <= json.length ? text : json;
}
