import { newId } from '../src/domain/ids.js';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: a well-formed client `X-Request-Id` is echoed, anything else replaced (spec 8). */
export function requestIdFrom(header: string | undefined): string {
  return header && CLIENT_ID.test(header) ? header : newId('req');
}
