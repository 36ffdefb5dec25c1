import type { DomainError } from '../domain/errors.js';

/** The spec's error envelope (2.4): the one body of every refusal, REST, MCP's HTTP answers and tool results. */
export const errorEnvelope = (e: DomainError, requestId: string) => ({
  error: { code: e.code, message: e.message, requestId, details: e.details ?? {} },
});

/**
 * The `Retry-After` an error answer carries (RFC 9110 §10.2.3), if none was set: a busy database (nothing was
 * done, retry shortly) always; a spent window its reset, unless the adapter already set one.
 */
export function retryAfterOf(err: DomainError, alreadySet: boolean): string | undefined {
  if (err.code === 'service_unavailable') return String(err.details?.retryAfterSeconds ?? 1);
  if (err.code === 'rate_limited' && !alreadySet && err.details?.retryAfterSeconds !== undefined) return String(err.details.retryAfterSeconds);
  return undefined;
}
