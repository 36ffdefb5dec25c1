import { newId } from '../domain/ids.js';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id (`X-Request-Id`): a well-formed client value is echoed, anything else replaced. */
export function requestIdOf(header: string | undefined): string {
  return header && CLIENT_ID.test(header) ? header : newId('req');
}
