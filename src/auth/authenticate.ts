import { apiKeyByHash, touchApiKey } from '../../db/stores/credentials.js';
import { type AuthenticatedActor, billingEntityOf } from '../domain/actor.js';
import { DomainError } from '../domain/errors.js';
import { safeEqual, sha256Hex } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import type { RateLimiter } from './rateLimit.js';
import type { ResponseState } from '../contract.js';
import { type Credentials, presentedToken } from './credentials.js';
import { countAddress } from './meter.js';

/**
 * Resolves an OAuth access token (`svc_at_…`) to an actor, or null: `Services.resolveAccessToken`, set by the runtime.
 */
export type AccessTokenResolver = NonNullable<Services['resolveAccessToken']>;

export const unauthorized = (message = 'Missing, invalid or revoked credential') =>
  new DomainError('unauthorized', message);

/**
 * The pipeline's first rule: turns the request's credential into an Actor, or throws 401. API keys act as `app`
 * for their owner, in the organization they were installed for or in the personal scope.
 * Only the SHA-256 of a token is looked up; the stored hash is compared again in constant time.
 */
export async function authenticate(s: Services, creds: Credentials): Promise<AuthenticatedActor> {
  const token = presentedToken(creds);
  if (!token) throw unauthorized('Missing or malformed credential');
  // (awaited: an async function returning another's promise adopts it with two more turns of the microtask queue)
  if (token.startsWith('svc_live_') || token.startsWith('svc_test_')) return await authenticateApiKey(s, token);
  if (token.startsWith('svc_at_') && s.resolveAccessToken) {
    const actor = await s.resolveAccessToken(s, token);
    if (actor) return actor;
  }
  throw unauthorized();
}

/** What the first step needs of a request: its credential and client address, and how to count it. */
export interface DoorInput {
  services: Services;
  rateLimiter: RateLimiter;
  credentials: Credentials;
  clientIp: string;
  /**
   * An actor already authenticated from these same credentials in this HTTP request (MCP's door): not looked up again.
   */
  authenticated?: AuthenticatedActor;
}

/**
 * The pipeline's first step: the actor, or the refusal. A refused credential is
 * counted against the client address's 60 s window before the refusal (so guessing keys is limited too):
 * past the window 429 `rate_limited` (`out.retryAfter`), else the 401 with `out.challenge`. `counted`:
 * which failures count, every one (a procedure call) or only a refused credential (MCP's door).
 */
export async function authenticateRequest(
  door: DoorInput,
  out: ResponseState,
  counted: 'every_failure' | 'refused_credential' = 'every_failure',
): Promise<AuthenticatedActor> {
  try {
    return door.authenticated ?? (await authenticate(door.services, door.credentials));
  } catch (err) {
    const refused = err instanceof DomainError && err.code === 'unauthorized';
    if (!refused && counted === 'refused_credential') throw err;
    await countAddress(door, out);
    if (refused)
      out.challenge = {
        kind: 'unauthorized',
        presented: presentedToken(door.credentials) !== null,
        message: err.message,
      };
    throw err;
  }
}

async function authenticateApiKey(s: Services, token: string): Promise<AuthenticatedActor> {
  const hash = sha256Hex(token);
  const key = await apiKeyByHash(s.ds, hash);
  if (!key || !safeEqual(key.tokenHash, hash) || key.revokedAt || key.userEmail === null) throw unauthorized();
  // a key of an organization the user has left no longer works
  if (key.organizationId && !key.membershipId) throw unauthorized();
  const now = s.now();
  const staleBefore = iso(new Date(now.getTime() - LAST_USED_PRECISION_MS));
  if (!key.lastUsedAt || key.lastUsedAt <= staleBefore) await touchLastUsed(s, key.id, now, staleBefore);
  return {
    kind: 'app',
    userId: key.userId,
    organizationId: key.organizationId,
    billingEntity: billingEntityOf(key.userId, key.organizationId),
    scopes: JSON.parse(key.scopes) as string[],
    credential: { method: 'api_key', id: key.id },
    plan: key.organizationId ? (key.plan ?? 'default') : 'default',
    user: { email: key.userEmail, name: key.userName, locale: key.userLocale, createdAt: key.userCreatedAt },
  };
}

/** `lastUsedAt` is kept to the minute (the developer settings list shows it). */
const LAST_USED_PRECISION_MS = 60_000;

/**
 * Records that a key was used, at most once a minute per key: the lookup already read `lastUsedAt`, so most
 * requests do not come here (`authenticateApiKey` looks first), and the conditional UPDATE lets only one of
 * several concurrent requests (or processes) write it. A failure here never fails the request.
 */
async function touchLastUsed(s: Services, id: string, now: Date, staleBefore: string): Promise<void> {
  try {
    await touchApiKey(s.ds, id, iso(now), staleBefore);
  } catch (err) {
    s.log.warn({ err, apiKeyId: id }, 'could not record the use of an API key');
  }
}
