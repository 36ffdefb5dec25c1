import { deleteExpiredOAuth } from '../../db/stores/oauth.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Housekeeping: deletes codes, tokens and grants that expired more than a day ago. Used refresh tokens are
 * kept until their family ends, so reuse detection holds for the family's whole life.
 */
export async function purgeExpiredOAuth(s: Services): Promise<number> {
  return deleteExpiredOAuth(s.ds, iso(new Date(s.now().getTime() - DAY_MS)));
}
