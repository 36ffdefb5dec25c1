import { z } from 'zod';
import { ERROR_STATUS, type DomainError, type ErrorCode } from '../domain/errors.js';
import { boundedForError, clip, MAX_ERROR_MESSAGE } from './inputBounds.js';

/** Every error code of the catalog (src/domain/errors.ts). */
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).meta({
  id: 'ErrorCode',
  description:
    'The error catalog. validation_error: the input does not match the schema; rule_violation: it does, but breaks a business rule.',
});

/** The error envelope (docs/rest-api.md#responses-and-errors). */
export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: ErrorCodeSchema,
      message: z.string().meta({ example: 'Room not found' }),
      requestId: z
        .string()
        .meta({ description: 'Equals the X-Request-Id header', example: 'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB' }),
      details: z.record(z.string(), z.unknown()).meta({
        description:
          'validation_error: issues (path, code, message); insufficient_scope: required, granted; others as documented',
      }),
    }),
  })
  .meta({ id: 'ApiError' });

/**
 * The spec's error envelope (2.4): the one body of every refusal, REST, MCP's HTTP answers and tool results.
 * Its message and details are bounded (`boundedForError`): whatever an error quotes of the input, an answer never
 * grows with it.
 */
export const errorEnvelope = (e: DomainError, requestId: string): z.infer<typeof ErrorEnvelope> => ({
  error: {
    code: e.code,
    message: clip(e.message, MAX_ERROR_MESSAGE),
    requestId,
    details: e.details ? (boundedForError(e.details) as Record<string, unknown>) : {},
  },
});

/**
 * The `Retry-After` an error answer carries (RFC 9110 §10.2.3), if none was set: a busy database (nothing was
 * done, retry shortly) always; a spent window its reset, unless the adapter already set one.
 */
export function retryAfterOf(err: DomainError, alreadySet: boolean): string | undefined {
  if (err.code === 'service_unavailable') return String(err.details?.retryAfterSeconds ?? 1);
  if (err.code === 'rate_limited' && !alreadySet && err.details?.retryAfterSeconds !== undefined)
    return String(err.details.retryAfterSeconds);
  return undefined;
}
