import { DomainError } from '../domain/errors.js';

/**
 * The bounds of any JSON a client sends (a REST body, an MCP message, the arguments of a tool call), checked
 * before a schema reads it: a schema's work, and the error it would build, grow with the input, so the input's
 * size is bounded here first, the same for every surface and every operation (the next one included).
 */
export const INPUT_LIMITS = {
  /** Object members and array items of the whole input, counted together. */
  maxMembers: 10_000,
  /** Nesting of objects and arrays. */
  maxDepth: 32,
  /** Characters of an object key (no field name comes near it; unknown keys are echoed in errors). */
  maxKeyLength: 256,
  /**
   * Characters of a string value: above every text field's own maximum (a record's body: 200,000). An upload's
   * content is the one exception: a file's bytes are bounded by SVC_MAX_UPLOAD_BYTES (payload_too_large).
   */
  maxStringLength: 1024 * 1024,
} as const;

export interface InputLimits {
  maxMembers: number;
  maxDepth: number;
  maxKeyLength: number;
  maxStringLength: number;
}

const refusal = (message: string, details: Record<string, unknown>) =>
  new DomainError('validation_error', message, { details });

/** A field's path as errors show it: at most a few segments, each cut short. */
export function shownPath(segments: readonly (string | number)[]): string {
  const cut = segments.slice(0, 8).map((s) => clip(String(s), 64));
  return cut.join('.') + (segments.length > 8 ? '.…' : '');
}

/** Text cut to `max` characters (an ellipsis marks the cut); never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (end > 0 && /[\ud800-\udbff]/.test(text[end - 1])) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Whether a parsed JSON value (or any input object) is within `limits`, and free of what no field can mean:
 * NUL characters (refused by PostgreSQL text, meaningless anywhere) and strings that are not well-formed
 * Unicode (a lone UTF-16 surrogate from a `\ud800` escape: the database would store U+FFFD, so what a write
 * answered would differ from what it stored). Keys are held to the same rules as values. Iterative, so a hostile
 * nesting cannot exhaust the stack, and it stops at the first problem, so its work is bounded by the limits.
 */
export function inputBoundsError(input: unknown, limits: InputLimits = INPUT_LIMITS): DomainError | undefined {
  let members = 0;
  const stack: [unknown, (string | number)[]][] = [[input, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v, limits.maxStringLength);
      if (problem) return refusal(problem.message, { field: shownPath(path) || '(input)', reason: problem.reason });
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (path.length >= limits.maxDepth) {
      return refusal(`Input is nested deeper than ${limits.maxDepth} levels`, {
        field: shownPath(path),
        reason: 'too_deep',
        limit: limits.maxDepth,
      });
    }
    if (Array.isArray(v)) {
      members += v.length;
      if (members > limits.maxMembers) return tooManyMembers(limits);
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...path, i]]);
      continue;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (++members > limits.maxMembers) return tooManyMembers(limits);
      if (k.length > limits.maxKeyLength) {
        return refusal(`Keys are limited to ${limits.maxKeyLength} characters`, {
          field: shownPath(path) || '(input)',
          reason: 'key_too_long',
          limit: limits.maxKeyLength,
        });
      }
      const problem = stringProblem(k, Infinity);
      if (problem) return refusal(problem.message, { field: shownPath([...path, k]), reason: problem.reason });
      stack.push([(v as Record<string, unknown>)[k], [...path, k]]);
    }
  }
  return undefined;
}

const tooManyMembers = (limits: InputLimits) =>
  refusal(`Input holds more than ${limits.maxMembers} members (object keys and array items)`, {
    reason: 'too_many_members',
    limit: limits.maxMembers,
  });

function stringProblem(s: string, maxLength: number): { message: string; reason: string } | undefined {
  if (s.length > maxLength)
    return { message: `Strings are limited to ${maxLength} characters`, reason: 'string_too_long' };
  if (s.includes('\u0000')) return { message: 'Strings must not contain NUL characters', reason: 'nul_character' };
  if (!isWellFormed(s))
    return {
      message: 'Strings must be well-formed Unicode (a lone UTF-16 surrogate is not)',
      reason: 'lone_surrogate',
    };
  return undefined;
}

/** `String.prototype.isWellFormed` (ES2024, Node 20+; the project's TypeScript lib is ES2023). */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Members the text may hold beyond `maxMembers`: the JSON-RPC envelope around a tool's arguments. */
const ENVELOPE_MEMBERS = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Bytes looked at one by one for a string's closing quote before `Buffer.indexOf` (memchr) takes over. */
const SHORT_STRING = 48;

/**
 * The next `"` at or after `from`, or -1. Most strings of a JSON body are short (keys, ids, a method's name): they
 * are scanned here, where a call into `indexOf` costs more than the scan; a longer one (a file's base64) is
 * found by `indexOf` at memchr speed.
 */
function nextQuote(buf: Buffer, from: number): number {
  const end = Math.min(from + SHORT_STRING, buf.length);
  for (let k = from; k < end; k++) if (buf[k] === QUOTE) return k;
  return end === buf.length ? -1 : buf.indexOf(QUOTE, end);
}

/**
 * Bounds the structure of JSON text before it is parsed: counts the members (`,` and the first item of each
 * object or array) and the nesting outside strings, and stops at the first limit passed. Parsing JSON builds every
 * member at once, and a body of a few megabytes of short keys is hundreds of thousands of them; a body as large
 * made of a few long strings (a file's base64) is cheap, and strings are skipped here at memchr speed. Returns
 * the refusal, or undefined (the text may still be malformed: JSON.parse decides).
 */
export function jsonTextBoundsError(bytes: Uint8Array, limits: InputLimits = INPUT_LIMITS): DomainError | undefined {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let members = 0;
  let depth = 0;
  let i = 0;
  const n = buf.length;
  while (i < n) {
    const b = buf[i];
    if (b === QUOTE) {
      // the closing quote: the next one not escaped by an odd run of backslashes
      let j = i;
      for (;;) {
        j = nextQuote(buf, j + 1);
        if (j < 0) return undefined; // unterminated: a parse error
        let slashes = 0;
        while (buf[j - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = j + 1;
      continue;
    }
    if (b === 0x7b || b === 0x5b) {
      if (++depth > limits.maxDepth)
        return refusal(`Input is nested deeper than ${limits.maxDepth} levels`, {
          reason: 'too_deep',
          limit: limits.maxDepth,
        });
      members++;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
    } else if (b === 0x2c) {
      members++;
    }
    if (members > limits.maxMembers + ENVELOPE_MEMBERS) return tooManyMembers(limits);
    i++;
  }
  return undefined;
}

/** Characters of an error's message, and of any string in its details. */
export const MAX_ERROR_MESSAGE = 1000;
const MAX_DETAIL_STRING = 500;
/** Items of an array, and members of an object, in an error's details; and their nesting. */
const MAX_DETAIL_ITEMS = 50;
const MAX_DETAIL_DEPTH = 4;

/**
 * A copy of what an error carries besides its message (REST's `details`, a JSON-RPC error's `data`), within
 * bounds: strings cut, arrays and objects cut to their first items, nesting cut. Whatever an error quotes of
 * the input, an answer never grows with it.
 */
export function boundedForError(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return clip(v, MAX_DETAIL_STRING);
  if (!v || typeof v !== 'object') return v;
  if (depth >= MAX_DETAIL_DEPTH) return Array.isArray(v) ? [] : {};
  if (Array.isArray(v)) return v.slice(0, MAX_DETAIL_ITEMS).map((x) => boundedForError(x, depth + 1));
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (++n > MAX_DETAIL_ITEMS) break;
    out[clip(k, MAX_DETAIL_STRING)] = boundedForError((v as Record<string, unknown>)[k], depth + 1);
  }
  return out;
}
