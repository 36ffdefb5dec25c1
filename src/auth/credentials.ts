import type { Credentials } from '../contract.js';

export type { Credentials } from '../contract.js';

/** The presented token, or null when none or a malformed header. Authorization wins over X-Api-Key. */
export function presentedToken(c: Credentials): string | null {
  if (c.authorization !== undefined) {
    const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(c.authorization);
    return m ? m[1] : null;
  }
  if (c.apiKey !== undefined) return c.apiKey.trim() || null;
  return null;
}
