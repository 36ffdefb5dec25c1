/** What follows an attempt. */
export type Verdict = 'success' | 'retry' | 'stop';

/**
 * 2xx success; 3xx a failure, never followed and not retried; 408, 429, 5xx and timeouts retried
 * (so are connection failures, which are as transient); 400, 401, 403, 404, 410, 422 stop at once, and so
 * does any other 4xx. No response for another reason (refused URL, unreadable configuration) stops too.
 */
export function classifyAttempt(statusCode: number | null, error: string | null): Verdict {
  if (statusCode !== null) {
    if (statusCode >= 200 && statusCode < 300) return 'success';
    if (statusCode === 408 || statusCode === 429 || statusCode >= 500) return 'retry';
    return 'stop';
  }
  return error === 'timeout' || error === 'network_error' ? 'retry' : 'stop';
}

/** Delay before the next attempt after `attemptsMade` attempts: base, 2×base, 4×base. */
export const backoffMs = (baseMs: number, attemptsMade: number): number => baseMs * 2 ** (attemptsMade - 1);
