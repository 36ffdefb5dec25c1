import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';

/**
 * A URL that Express's `parseurl` splits into path and query by its first `?` (a path beginning with `/` and
 * holding no whitespace, `#`, U+00A0 or U+FEFF): the server's listener may answer such a request without Express
 * and read its path and query exactly as Express would. Any other URL goes through Express.
 */
export const PLAIN_URL = /^\/[^\t\n\f\r #\u00a0\ufeff]*$/;

/** The path of a URL, as Express's `req.path` reads it: up to the first `?`. */
export const pathOfUrl = (url: string): string => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

/** The query of a URL without one (nobody writes into a parsed query). */
const NO_QUERY: Readonly<Record<string, unknown>> = Object.freeze({});

/** A URL's query as Express's "simple" parser reads it: `querystring.parse` of what follows the first `?`. */
export const queryOfUrl = (url: string): Record<string, unknown> => {
  const q = url.indexOf('?');
  return q < 0 ? NO_QUERY : (querystring.parse(url.slice(q + 1)) as Record<string, unknown>);
};

/** What a surface's direct route is given: the body guard to run first, and where a failure it does not answer goes. */
export type Listener = (req: IncomingMessage, res: ServerResponse) => void;
export type Fail = (err: unknown, req: IncomingMessage, res: ServerResponse) => void;

/**
 * The origin form (`/path?query`) of a request target: a proxy may send the absolute form (`http://host/path`,
 * RFC 9112 §3.2.2), which a server must accept; what rebuilds a URL from the Host header needs the path.
 */
export function originFormOf(url: string): string {
  if (url.startsWith('/')) return url;
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return '/';
  }
}
