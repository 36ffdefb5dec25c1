import { validationError } from '../domain/errors.js';

/** A custom header set at registration: sent with every delivery of the webhook. */
export type CustomHeader = [name: string, value: string];

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADERS = 20;
const MAX_NAME = 100;
const MAX_VALUE = 2000;

/**
 * Names a custom header may never take (spec 6.3 rule 5): the signed `Svc-Webhook-*` headers, the legacy
 * `X-Webhook-*`, `Sunset` and `Deprecation`, and the transport's own framing headers, which would let a
 * registration break or smuggle the request. `Content-Type` and `User-Agent` may be overridden.
 */
export function protectedHeaderReason(name: string): string | null {
  const n = name.toLowerCase();
  if (n.startsWith('svc-webhook-')) return 'Svc-Webhook-* headers are set by the sender';
  if (n.startsWith('x-webhook-')) return 'X-Webhook-* headers are set by the sender';
  if (n === 'sunset' || n === 'deprecation') return `${name} is set by the sender`;
  if (['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect'].includes(n)
    || n.startsWith('proxy-')) {
    return `${name} is controlled by the HTTP client`;
  }
  return null;
}

/** Validates custom headers at creation: names are HTTP tokens, unique, not protected; values single-line. */
export function validateCustomHeaders(headers: CustomHeader[]): CustomHeader[] {
  if (headers.length > MAX_HEADERS) throw validationError(`At most ${MAX_HEADERS} custom headers`, { field: 'headers' });
  const seen = new Set<string>();
  return headers.map(([rawName, rawValue]) => {
    const name = rawName.trim();
    const value = rawValue.trim();
    if (!TOKEN.test(name) || name.length > MAX_NAME) {
      throw validationError(`Invalid header name ${JSON.stringify(name.slice(0, MAX_NAME))}`, { field: 'headers', header: name.slice(0, MAX_NAME) });
    }
    const reason = protectedHeaderReason(name);
    if (reason) throw validationError(`Custom header ${name} is not allowed: ${reason}`, { field: 'headers', header: name, reason: 'protected_header' });
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) || value.length > MAX_VALUE) {
      throw validationError(`Invalid value for header ${name}`, { field: 'headers', header: name });
    }
    if (seen.has(name.toLowerCase())) throw validationError(`Header ${name} is given twice`, { field: 'headers', header: name });
    seen.add(name.toLowerCase());
    return [name, value];
  });
}

/** Parses the CLI and form notation `Name: value`. */
export function parseHeaderLine(line: string): CustomHeader {
  const i = line.indexOf(':');
  if (i <= 0) throw validationError(`Header must be "Name: value", got ${JSON.stringify(line.slice(0, 100))}`, { field: 'headers' });
  return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
}
