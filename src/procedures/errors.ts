import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { clip, shownPath } from '../http/inputBounds.js';
import { domainErrorOf } from '../contract.js';

export { serviceUnavailable } from '../contract.js';

/**
 * How many input problems a validation error shows (its message and `details.issues`), and how many unknown keys of
 * one.
 */
const SHOWN_ISSUES = 5;
const SHOWN_KEYS = 5;
/** Characters of one problem's message as shown. */
const ISSUE_MESSAGE_MAX = 200;

/**
 * The problems of refused input as the error shows them: a few, each cut short, so that an answer never grows
 * with the input (a call with thousands of unknown keys answers with five of them and their count).
 */
function validationDetails(err: z.ZodError) {
  const issues = err.issues.slice(0, SHOWN_ISSUES).map((i) => {
    const keys = 'keys' in i ? (i.keys as string[]) : undefined;
    const message =
      keys && keys.length > SHOWN_KEYS
        ? `Unrecognized keys: ${keys
            .slice(0, SHOWN_KEYS)
            .map((k) => JSON.stringify(clip(k, 64)))
            .join(', ')} (and ${keys.length - SHOWN_KEYS} more)`
        : i.message;
    return {
      path: shownPath(i.path as (string | number)[]),
      code: i.code,
      message: clip(message, ISSUE_MESSAGE_MAX),
      ...(keys
        ? {
            keys: keys.slice(0, SHOWN_KEYS).map((k) => clip(k, 64)),
            ...(keys.length > SHOWN_KEYS ? { keyCount: keys.length } : {}),
          }
        : {}),
    };
  });
  return { issues, ...(err.issues.length > SHOWN_ISSUES ? { issueCount: err.issues.length } : {}) };
}

/**
 * The message of refused input: the problems themselves, a few at most, so that a model reading only the
 * message can correct its call (`Invalid input: roomId: must be a room_ identifier; (input): Unrecognized key:
 * "extra"`).
 */
function validationMessage(issues: { path: string; message: string }[], total: number): string {
  if (!issues.length) return 'Invalid input';
  const listed = issues.map((i) => `${i.path || '(input)'}: ${i.message}`);
  const more = total > issues.length ? ` (and ${total - issues.length} more)` : '';
  return `Invalid input: ${listed.join('; ')}${more}`;
}

/**
 * Maps anything a procedure call threw to the one domain error: domain errors as they are, input that
 * failed its schema as 400 `validation_error` with the issues, a busy database as 503 `service_unavailable`
 * (to retry), anything else as a generic 500 that leaks nothing (the cause is kept for the log).
 */
export function toDomainError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof TRPCError) {
    if (err.cause instanceof DomainError) return err.cause;
    // BAD_REQUEST is tRPC's input-parse failure; output-validation failures are INTERNAL and stay 500
    if (err.code === 'BAD_REQUEST') {
      const details = err.cause instanceof z.ZodError ? validationDetails(err.cause) : undefined;
      const total = err.cause instanceof z.ZodError ? err.cause.issues.length : 0;
      return new DomainError('validation_error', validationMessage(details?.issues ?? [], total), {
        details,
        cause: err,
      });
    }
  }
  return domainErrorOf(err);
}
