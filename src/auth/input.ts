import { DomainError } from '../domain/errors.js';

const MAX_INPUT_DEPTH = 32;

/**
 * Rejects input no operation can mean, before anything else reads it: nesting deeper than 32 levels, and
 * NUL characters (meaningless in any field, and refused by PostgreSQL text). Iterative, so hostile
 * nesting cannot exhaust the stack.
 */
export function unacceptableInput(input: unknown): DomainError | undefined {
  const stack: [unknown, string, number][] = [[input, '', 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string' && v.includes('\u0000')) {
      return new DomainError('validation_error', 'Strings must not contain NUL characters', { details: { field: path || '(input)' } });
    }
    if (v && typeof v === 'object') {
      if (depth >= MAX_INPUT_DEPTH) {
        return new DomainError('validation_error', `Input is nested deeper than ${MAX_INPUT_DEPTH} levels`, { details: { field: path } });
      }
      for (const [k, child] of Object.entries(v)) stack.push([child, path ? `${path}.${k}` : k, depth + 1]);
    }
  }
  return undefined;
}
