import { createHash } from 'node:crypto';
import { safeEqual } from '../domain/hashing.js';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 7636 §4.6 with S256 only: base64url(SHA-256(code_verifier)) equals the stored challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return safeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
