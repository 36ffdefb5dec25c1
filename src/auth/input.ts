import type { DomainError } from '../domain/errors.js';
import { INPUT_LIMITS, inputBoundsError } from '../http/inputBounds.js';
import type { ProcedureMeta } from '../contract.js';

/**
 * An upload's content (a file's bytes as base64, or its text) is bounded by SVC_MAX_UPLOAD_BYTES, not by the string
 * limit.
 */
const UPLOAD_LIMITS = { ...INPUT_LIMITS, maxStringLength: Infinity };

/**
 * Rejects input no operation can mean, before anything else reads it (src/http/inputBounds.ts, the one check
 * every surface's input passes: REST, MCP tool calls, resources, every fast path): more members, deeper nesting,
 * longer keys or strings than any operation takes, NUL characters, strings that are not well-formed Unicode.
 */
export function unacceptableInput(input: unknown, meta?: ProcedureMeta): DomainError | undefined {
  return inputBoundsError(input, meta?.http.rawBody ? UPLOAD_LIMITS : INPUT_LIMITS);
}
