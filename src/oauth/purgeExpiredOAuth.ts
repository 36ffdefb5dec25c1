import { LessThan } from 'typeorm';
import { OAuthCode, OAuthGrant, OAuthToken } from '../../db/entities/index.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Housekeeping: deletes codes, tokens and grants that expired more than a day ago. Used refresh tokens are
 * kept until their family ends, so reuse detection holds for the family's whole life.
 */
export async function purgeExpiredOAuth(s: Services): Promise<number> {
  const cutoff = iso(new Date(s.now().getTime() - DAY_MS));
  let deleted = 0;
  for (const entity of [OAuthCode, OAuthToken, OAuthGrant]) {
    deleted += (await s.ds.getRepository(entity).delete({ expiresAt: LessThan(cutoff) })).affected ?? 0;
  }
  return deleted;
}
