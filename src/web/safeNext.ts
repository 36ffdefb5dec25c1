/** Where to go after sign-in when nothing better is known. */
export const DEFAULT_AFTER_LOGIN = '/settings/developer';

/** Longer targets are not ours (the longest we build, the consent step's, is about 2 KB). */
const MAX_NEXT_LENGTH = 8192;
/** C0 controls, DEL and the backslash: a browser strips or rewrites these, so a target may not hold them. */
const hasForbidden = (s: string) =>
  [...s].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
/** Percent-escapes of ASCII: `%2e`, `%2f`, `%5c`, `%09`, … */
const ASCII_ESCAPE = /%([0-7][0-9a-f])/gi;

/** Decodes ASCII percent-escapes until nothing changes (double-encoded `%252f` included). */
function decodeAscii(s: string): string {
  for (let i = 0; i < 8; i++) {
    const d = s.replace(ASCII_ESCAPE, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (d === s) return d;
    s = d;
  }
  return s;
}

/**
 * The one decision on where /login may send a signed-in user: `next` when it is a
 * same-origin path after normalization, else DEFAULT_AFTER_LOGIN. The target is resolved against BASE_URL
 * as a browser resolves a Location (`.`/`..` segments, their `%2e` spellings); the result must be on
 * BASE_URL's origin, and its path, with percent-escapes decoded as a later hop might decode them, must
 * not start with `//` (scheme-relative: another host), hold `.`/`..` segments, backslashes or control
 * characters. So `/.//evil.com`, `/%2e//evil.com`, `/a/..//evil.com`, `/%2f%2fevil.com`, `/\evil.com`,
 * `https://evil.com` and `javascript:…` all fall back to the default.
 */
export function safeNext(baseUrl: string, next: unknown): string {
  if (typeof next !== 'string' || next.length > MAX_NEXT_LENGTH || !next.startsWith('/') || hasForbidden(next)) {
    return DEFAULT_AFTER_LOGIN;
  }
  const base = new URL(baseUrl);
  let u: URL;
  try {
    u = new URL(next, base);
  } catch {
    return DEFAULT_AFTER_LOGIN;
  }
  if (u.origin !== base.origin || (u.protocol !== 'http:' && u.protocol !== 'https:')) return DEFAULT_AFTER_LOGIN;
  const path = decodeAscii(u.pathname);
  const segments = path.split('/');
  if (path.startsWith('//') || hasForbidden(path) || segments.some((x) => x === '.' || x === '..'))
    return DEFAULT_AFTER_LOGIN;
  const target = u.pathname + u.search + u.hash;
  // what the browser will resolve the Location to is the target itself, on our origin
  const again = new URL(target, base);
  const resolved = again.href.slice(again.origin.length);
  if (again.origin !== base.origin || resolved !== target) return DEFAULT_AFTER_LOGIN;
  return target;
}
