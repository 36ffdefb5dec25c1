import { validateHeaderName, validateHeaderValue } from 'node:http';
import { validationError } from '../domain/errors.js';
import {
  CONNECTION_IN,
  CONTENT_LENGTH_IN,
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  TRANSFER_ENCODING_IN,
} from '../http/headers.js';

/** A custom header set at registration: sent with every delivery of the webhook. */
export type CustomHeader = [name: string, value: string];

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADERS = 20;
const MAX_NAME = 100;
const MAX_VALUE = 2000;

/** Names the transport owns exactly (hop-by-hop and framing, RFC 9110 §7.6.1, §6.4-6.5, §7.2, §10.1.1). */
const TRANSPORT_NAMES = new Set([
  CONNECTION_IN,
  'keep-alive',
  'te',
  'trailer',
  TRANSFER_ENCODING_IN,
  'upgrade',
  'http2-settings',
  CONTENT_LENGTH_IN,
  'host',
  'expect',
]);

/**
 * The name as an intermediary may read it: lower case, `_` as `-`. CGI-style servers and some proxies
 * (nginx with `underscores_in_headers`, PHP, WSGI, Rack) fold `Svc_Webhook_Signature` onto
 * `Svc-Webhook-Signature`, so a check on the spelling alone could be walked around.
 */
const canonicalName = (name: string) => name.toLowerCase().replace(/_/g, '-');

/** The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), after `canonicalName`. */
const STANDARD_NAMES = new Set([
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
]);

/** True for a name an intermediary would read as one of the Standard Webhooks headers. */
export const isStandardHeaderName = (name: string): boolean => STANDARD_NAMES.has(canonicalName(name));

/**
 * Names a custom header may never take, compared after `canonicalName`: the signed
 * `Svc-Webhook-*` headers, the legacy `X-Webhook-*`, `Sunset` and `Deprecation`, the Standard Webhooks
 * `webhook-id`, `webhook-timestamp` and `webhook-signature`, and the transport's own
 * hop-by-hop and framing headers (`Proxy-*` too), which would let a registration break or smuggle the
 * request. `Content-Type` and `User-Agent` may be overridden.
 */
export function protectedHeaderReason(name: string): string | null {
  const n = canonicalName(name);
  if (/^svc-webhook(-|$)/.test(n)) return 'Svc-Webhook-* headers are set by the sender';
  if (/^x-webhook(-|$)/.test(n)) return 'X-Webhook-* headers are set by the sender';
  if (STANDARD_NAMES.has(n)) return `${name} is a Standard Webhooks header, set by the sender`;
  if (n === 'sunset' || n === 'deprecation') return `${name} is set by the sender`;
  if (TRANSPORT_NAMES.has(n) || n.startsWith('proxy-')) return `${name} is controlled by the HTTP client`;
  return null;
}

/** True when `value` cannot be sent as header `name` (Node's own check: no control character but TAB, Latin-1 only). */
function unsendableValue(name: string, value: string): boolean {
  try {
    validateHeaderValue(name, value);
    return false;
  } catch {
    return true;
  }
}

/**
 * Validates custom headers at creation: names are HTTP tokens, unique (also as `canonicalName`), not
 * protected; values are what an HTTP request can carry (`http.validateHeaderValue`), so no delivery can
 * fail later because of them.
 */
export function validateCustomHeaders(headers: CustomHeader[]): CustomHeader[] {
  if (headers.length > MAX_HEADERS)
    throw validationError(`At most ${MAX_HEADERS} custom headers`, { field: 'headers' });
  const seen = new Set<string>();
  return headers.map(([rawName, rawValue]) => {
    const name = rawName.trim();
    const value = rawValue.trim();
    if (!TOKEN.test(name) || name.length > MAX_NAME || invalidName(name)) {
      throw validationError(`Invalid header name ${JSON.stringify(name.slice(0, MAX_NAME))}`, {
        field: 'headers',
        header: name.slice(0, MAX_NAME),
      });
    }
    const reason = protectedHeaderReason(name);
    if (reason)
      throw validationError(`Custom header ${name} is not allowed: ${reason}`, {
        field: 'headers',
        header: name,
        reason: 'protected_header',
      });
    if (value.length > MAX_VALUE || unsendableValue(name, value)) {
      throw validationError(
        `Invalid value for header ${name}: it must fit in an HTTP header (at most ${MAX_VALUE} Latin-1 characters, no control character but tab)`,
        { field: 'headers', header: name },
      );
    }
    const key = canonicalName(name);
    if (seen.has(key)) throw validationError(`Header ${name} is given twice`, { field: 'headers', header: name });
    seen.add(key);
    return [name, value];
  });
}

/**
 * The first stored custom header a delivery could not send (rows written before values were checked as
 * `validateCustomHeaders` does today), or null. The sender refuses such a delivery with a clear error
 * instead of attempting it and failing as a network error.
 */
export function unsendableCustomHeader(headers: CustomHeader[]): string | null {
  for (const [name, value] of headers) {
    // stored before the standard's names were refused: the sender drops it rather than failing the delivery
    if (isStandardHeaderName(name)) continue;
    if (!TOKEN.test(name) || invalidName(name) || protectedHeaderReason(name) || unsendableValue(name, value))
      return name;
  }
  return null;
}

function invalidName(name: string): boolean {
  try {
    validateHeaderName(name);
    return false;
  } catch {
    return true;
  }
}

/** Parses the CLI and form notation `Name: value`. */
export function parseHeaderLine(line: string): CustomHeader {
  const i = line.indexOf(':');
  if (i <= 0)
    throw validationError(`Header must be "Name: value", got ${JSON.stringify(line.slice(0, 100))}`, {
      field: 'headers',
    });
  return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
}
