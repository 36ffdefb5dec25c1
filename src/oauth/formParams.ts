import type { Request } from 'express';
import { OAuthError } from './OAuthError.js';

/** Reads single parameters of a form-encoded OAuth request. */
export interface FormParams {
  /** The value, or undefined when absent or empty; a repeated parameter is `invalid_request` (RFC 6749 §3.2). */
  one(name: string): string | undefined;
}

/** The form body of a token or revocation request; anything but `application/x-www-form-urlencoded` is refused. */
export function formParams(req: Request): FormParams {
  if (!req.is('application/x-www-form-urlencoded') || typeof req.body !== 'object' || req.body === null) {
    throw new OAuthError('invalid_request', 'The request body must be application/x-www-form-urlencoded');
  }
  const body = req.body as Record<string, unknown>;
  return {
    one(name) {
      const v = Object.hasOwn(body, name) ? body[name] : undefined;
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string') throw new OAuthError('invalid_request', `${name} is repeated`);
      // meaningless in any parameter, and refused by PostgreSQL text: never let one reach a query
      if (v.includes('\0')) throw new OAuthError('invalid_request', `${name} must not contain NUL characters`);
      return v;
    },
  };
}
