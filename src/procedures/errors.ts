import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { isTransientDatabaseError, isUnstorableTextError } from '../../db/databaseErrors.js';
import { DomainError } from '../domain/errors.js';

function validationDetails(err: z.ZodError) {
  return {
    issues: err.issues.map((i) => ({
      path: i.path.map(String).join('.'),
      code: i.code,
      message: i.message,
      ...('keys' in i ? { keys: i.keys } : {}),
    })),
  };
}

/** How many input problems a validation error's message lists (all of them stay in `details.issues`). */
const LISTED_ISSUES = 5;

/**
 * The message of refused input: the problems themselves, a few at most, so that a model reading only the
 * message can correct its call (`Invalid input: roomId: must be a room_ identifier; (input): Unrecognized key: "extra"`).
 */
function validationMessage(issues: { path: string; message: string }[]): string {
  if (!issues.length) return 'Invalid input';
  const listed = issues.slice(0, LISTED_ISSUES).map((i) => `${i.path || '(input)'}: ${i.message}`);
  const more = issues.length > LISTED_ISSUES ? ` (and ${issues.length - LISTED_ISSUES} more)` : '';
  return `Invalid input: ${listed.join('; ')}${more}`;
}

/** 503 `service_unavailable`: the database was busy; nothing was written (the transaction rolled back). */
export const serviceUnavailable = (cause: unknown) =>
  new DomainError('service_unavailable', 'The service is busy; retry the request shortly', { details: { retryAfterSeconds: 1 }, cause });

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
      return new DomainError('validation_error', validationMessage(details?.issues ?? []), { details, cause: err });
    }
  }
  if (isTransientDatabaseError(err)) return serviceUnavailable(err);
  if (isUnstorableTextError(err)) return new DomainError('validation_error', 'Strings must not contain NUL characters', { cause: err });
  return new DomainError('internal_error', 'Internal server error', { cause: err });
}
