import { TRPCError } from '@trpc/server';
import { z } from 'zod';
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

/**
 * Maps anything a procedure call threw to the one domain error: domain errors as they are, input that
 * failed its schema as 400 `validation_error` with the issues, anything else as a generic 500 that leaks
 * nothing (the cause is kept for the log).
 */
export function toDomainError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof TRPCError) {
    if (err.cause instanceof DomainError) return err.cause;
    // BAD_REQUEST is tRPC's input-parse failure; output-validation failures are INTERNAL and stay 500
    if (err.code === 'BAD_REQUEST') {
      const details = err.cause instanceof z.ZodError ? validationDetails(err.cause) : undefined;
      return new DomainError('validation_error', 'Invalid input', { details, cause: err });
    }
  }
  return new DomainError('internal_error', 'Internal server error', { cause: err });
}
