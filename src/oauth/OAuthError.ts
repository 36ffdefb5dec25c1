import type { Response } from 'express';
import { isDatabaseUnavailableError } from '../../db/databaseErrors.js';
import { CACHE_CONTROL_HEADER, PRAGMA_HEADER, RETRY_AFTER } from '../http/headers.js';

/** The RFC 6749 §5.2 error codes (and RFC 8707's `invalid_target`) this server answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'server_error'
  | 'temporarily_unavailable';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  server_error: 500,
  temporarily_unavailable: 503,
};

/**
 * An error of the token and revocation endpoints, rendered as `{"error","error_description"}` (RFC 6749
 * §5.2). `headers` carries `WWW-Authenticate` for a failed HTTP Basic client authentication.
 */
export class OAuthError extends Error {
  readonly status: number;

  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
    /** Overrides the code's status where HTTP says more (408 for a body that did not arrive in time). */
    status?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
    this.status = status ?? STATUS[code];
  }

  toResponseObject(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

/** Headers every token-endpoint answer carries (RFC 6749 §5.1). */
export const NO_STORE = { [CACHE_CONTROL_HEADER]: 'no-store', [PRAGMA_HEADER]: 'no-cache' } as const;

/**
 * Renders an OAuth error; a momentarily busy database becomes `temporarily_unavailable` (503, Retry-After:
 * nothing was written), anything else that is not an OAuthError a generic `server_error`.
 */
export function sendOAuthError(res: Response, err: unknown): void {
  const e =
    err instanceof OAuthError
      ? err
      : isDatabaseUnavailableError(err)
        ? new OAuthError('temporarily_unavailable', 'The server is busy; retry shortly', { [RETRY_AFTER]: '1' })
        : new OAuthError('server_error', 'The server could not handle the request');
  res.set(NO_STORE).set(e.headers).status(e.status).json(e.toResponseObject());
}
