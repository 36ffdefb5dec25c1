/** Where to go after sign-in when nothing better is known. */
export const DEFAULT_AFTER_LOGIN = '/settings/apps';

/**
 * The `next` target of /login when it is a same-origin relative path (`/oauth/consent?…`), else the
 * default: absolute URLs, scheme-relative `//host`, backslash tricks and control characters are refused,
 * so /login is never an open redirect.
 */
export function safeNext(baseUrl: string, next: unknown): string {
  const controlOrBackslash = typeof next === 'string' && [...next].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || controlOrBackslash) {
    return DEFAULT_AFTER_LOGIN;
  }
  const base = new URL(baseUrl);
  let u: URL;
  try {
    u = new URL(next, base);
  } catch {
    return DEFAULT_AFTER_LOGIN;
  }
  if (u.origin !== base.origin) return DEFAULT_AFTER_LOGIN;
  return u.pathname + u.search + u.hash;
}
