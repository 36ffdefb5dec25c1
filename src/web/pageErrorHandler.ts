import type { NextFunction, Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { domainErrorOf } from '../contract.js';
import { DomainError } from '../domain/errors.js';
import { sendErrorPage } from './layout.js';
import { RETRY_AFTER } from '../http/headers.js';

/**
 * What the database said of a failure, as the API maps it (`domainErrorOf`): text it cannot store
 * (`validation_error`) or not able to serve now (`service_unavailable`), found through the causes of domain errors
 * too; undefined for anything else.
 */
function databaseVerdict(err: unknown): string | undefined {
  let e = err;
  while (e instanceof DomainError) e = e.cause;
  if (e === undefined || e === null) return undefined;
  const code = domainErrorOf(e).code;
  return code === 'validation_error' || code === 'service_unavailable' ? code : undefined;
}

/**
 * The last handler of the page routers: a body the form parser refused is a 400 page (408 when it did not
 * arrive in time, 429 when its client has too many in flight), a busy database a 503 page, anything else a
 * generic 500 page; the cause goes to the log only.
 */
export function pageErrorHandler(s: Services) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: number }).status;
    if (status === 408) return sendErrorPage(res, 408, 'Too slow', 'The form did not arrive in time. Try again.');
    if (status === 429) {
      res.set(RETRY_AFTER, '1');
      return sendErrorPage(
        res,
        429,
        'Too many requests',
        'Too many requests are in flight from your address. Try again in a moment.',
      );
    }
    const stored = databaseVerdict(err);
    if ((status && status >= 400 && status < 500) || stored === 'validation_error')
      return sendErrorPage(res, 400, 'Bad request', 'The form could not be read.');
    if (stored === 'service_unavailable') {
      res.set(RETRY_AFTER, '1');
      return sendErrorPage(res, 503, 'Busy', 'The service is busy. Nothing was changed; try again in a moment.');
    }
    s.log.error({ err }, 'page failed');
    sendErrorPage(res, 500, 'Something went wrong', 'The page could not be shown. Try again later.');
  };
}
