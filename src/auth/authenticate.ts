import { ApiKey, Membership, Organization } from '../../db/entities/index.js';
import { type Actor, billingEntityOf } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import { safeEqual, sha256Hex } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { type Credentials, presentedToken } from './credentials.js';

/** Resolves an OAuth access token (`svc_at_…`) to an actor, or null. Supplied by the OAuth server. */
export type AccessTokenResolver = (s: Services, token: string) => Promise<Actor | null>;

const resolvers: { accessToken?: AccessTokenResolver } = {};
/** The OAuth area registers how its access tokens authenticate (keeps src/auth free of src/oauth). */
export const setAccessTokenResolver = (r: AccessTokenResolver): void => {
  resolvers.accessToken = r;
};

export const unauthorized = (message = 'Missing, invalid or revoked credential') =>
  new DomainError('unauthorized', message);

/**
 * Spec 5.5 condition 1: turns the request's credential into an Actor, or throws 401. API keys act as `app`
 * for their owner, in the organization they were installed for or in the personal scope.
 * Only the SHA-256 of a token is looked up; the stored hash is compared again in constant time.
 */
export async function authenticate(s: Services, creds: Credentials): Promise<Actor> {
  const token = presentedToken(creds);
  if (!token) throw unauthorized('Missing or malformed credential');
  if (token.startsWith('svc_live_') || token.startsWith('svc_test_')) return authenticateApiKey(s, token);
  if (token.startsWith('svc_at_') && resolvers.accessToken) {
    const actor = await resolvers.accessToken(s, token);
    if (actor) return actor;
  }
  throw unauthorized();
}

async function authenticateApiKey(s: Services, token: string): Promise<Actor> {
  const hash = sha256Hex(token);
  const key = await s.ds.manager.findOneBy(ApiKey, { tokenHash: hash });
  if (!key || !safeEqual(key.tokenHash, hash) || key.revokedAt) throw unauthorized();
  let plan = 'default';
  if (key.organizationId) {
    // a key of an organization the user has left no longer works
    if (!(await s.ds.manager.countBy(Membership, { userId: key.userId, organizationId: key.organizationId }))) {
      throw unauthorized();
    }
    plan = (await s.ds.manager.findOneBy(Organization, { id: key.organizationId }))?.plan ?? 'default';
  }
  return {
    kind: 'app',
    userId: key.userId,
    organizationId: key.organizationId,
    billingEntity: billingEntityOf(key.userId, key.organizationId),
    scopes: key.scopes,
    credential: { method: 'api_key', id: key.id },
    plan,
  };
}
