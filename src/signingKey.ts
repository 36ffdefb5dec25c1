import { hkdfSync } from 'node:crypto';

const cache = new Map<string, Uint8Array>();

/**
 * A 256-bit HS256 key for one purpose (`session`, `csrf`, `authorization-request`), derived from the server
 * secret with HKDF, so a JWT made for one purpose never verifies as another.
 */
export function signingKey(secret: string, purpose: string): Uint8Array {
  const id = `${purpose}\0${secret}`;
  let key = cache.get(id);
  if (!key) {
    key = new Uint8Array(hkdfSync('sha256', secret, 'svc', `svc:${purpose}`, 32));
    cache.set(id, key);
  }
  return key;
}
