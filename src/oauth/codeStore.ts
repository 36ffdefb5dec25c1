import type { EntityManager } from 'typeorm';
import type { OAuthCode } from '../../db/entities/index.js';
import { codeByHash, insertCode, markCodeUsed } from '../../db/stores/oauth.js';
import { randomToken, safeEqual, sha256Hex } from '../domain/hashing.js';
import { newId } from '../domain/ids.js';
import { iso } from '../domain/time.js';
import { CODE_TTL_MS } from './constants.js';

export interface NewCode {
  clientId: string;
  userId: string;
  organizationId: string | null;
  scopes: string[];
  resource: string;
  redirectUri: string;
  codeChallenge: string;
}

/** Issues a single-use authorization code valid 60 s. Only its SHA-256 is stored. */
export async function issueCode(m: EntityManager, now: Date, c: NewCode): Promise<string> {
  const code = randomToken('', 32);
  await insertCode(m, {
    id: newId('cod', now.getTime()),
    codeHash: sha256Hex(code),
    ...c,
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + CODE_TTL_MS)),
    usedAt: null,
    grantId: null,
  });
  return code;
}

export async function findCode(m: EntityManager, code: string): Promise<OAuthCode | null> {
  const hash = sha256Hex(code);
  const row = await codeByHash(m, hash);
  return row && safeEqual(row.codeHash, hash) ? row : null;
}

/** Consumes a code atomically: true for the one exchange that wins, false when it was used already. */
export async function consumeCode(m: EntityManager, now: Date, codeId: string): Promise<boolean> {
  return markCodeUsed(m, codeId, iso(now));
}
