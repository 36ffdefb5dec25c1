import type { EntityManager } from 'typeorm';
import type { ApiKey } from '../../db/entities/index.js';
import {
  apiKeyById,
  apiKeysFor,
  apiKeysOfUser,
  insertApiKey,
  keyOwnerStanding,
  markApiKeyRevoked,
} from '../../db/stores/credentials.js';
import { inTransaction } from '../../db/transaction.js';
import { notFound, validationError } from './errors.js';
import { randomToken, sha256Hex } from './hashing.js';
import { newId } from './ids.js';
import { endRunsOfRevokedStarters } from './runEnd.js';
import { SCOPES } from './scopes.js';
import type { Services } from './services.js';
import { iso } from './time.js';

export interface CreateKeyOptions {
  userId: string;
  organizationId?: string | null;
  name: string;
  scopes: string[];
  mode: 'live' | 'test';
}

/** The shape of an issued key: `svc_live_`/`svc_test_` + 32 random bytes base64url (43 chars). */
export const API_KEY_PATTERN = /^svc_(live|test)_[A-Za-z0-9_-]{43}$/;

/** Issues a key. The plaintext token is returned here once; only its SHA-256 is stored. */
export async function createApiKey(
  m: EntityManager,
  now: Date,
  o: CreateKeyOptions,
): Promise<{ key: ApiKey; token: string }> {
  if (!o.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  const unknown = o.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || o.scopes.length === 0)
    throw validationError('Unknown or empty scopes', { field: 'scopes', unknown });
  const owner = await keyOwnerStanding(m, o.userId, o.organizationId ?? null);
  if (!owner.user) throw notFound('User');
  if (o.organizationId && !owner.member) {
    throw validationError('The user is not a member of that organization', { field: 'organizationId' });
  }
  const prefix = `svc_${o.mode}_`;
  const token = randomToken(prefix, 32);
  const key = await insertApiKey(m, {
    id: newId('key', now.getTime()),
    userId: o.userId,
    organizationId: o.organizationId ?? null,
    name: o.name.trim(),
    mode: o.mode,
    scopes: [...new Set(o.scopes)],
    tokenHash: sha256Hex(token),
    prefix,
    last4: token.slice(-4),
    createdAt: iso(now),
    revokedAt: null,
  });
  return { key, token };
}

/**
 * Revokes a key; requests with it get 401 from the next one on. `userId` limits it to its owner.
 * The agent runs the key started end with it (`credential_revoked`), and their delegated tokens stop at once:
 * a run acts on the authority of the credential that started it. Returns the ids of the runs it ended.
 */
export async function revokeApiKey(
  m: EntityManager,
  now: Date,
  id: string,
  userId?: string,
): Promise<{ runsEnded: string[] }> {
  const key = await apiKeyById(m, id, userId);
  if (!key) throw notFound('API key');
  if (!key.revokedAt) await markApiKeyRevoked(m, id, iso(now));
  return { runsEnded: await endRunsOfRevokedStarters(m, now, { apiKeyId: id }) };
}

export async function listApiKeys(m: EntityManager, userId: string): Promise<ApiKey[]> {
  return apiKeysOfUser(m, userId);
}

/** The keys that act for `userId` and/or are installed for `organizationId`, oldest first (the operator's list). */
export async function listApiKeysFor(
  m: EntityManager,
  o: { userId?: string; organizationId?: string },
): Promise<ApiKey[]> {
  return apiKeysFor(m, o);
}

/** A user's own key by id, or null (another user's key is no key of theirs). */
export const findOwnApiKey = (m: EntityManager, id: string, userId: string): Promise<ApiKey | null> =>
  apiKeyById(m, id, userId);

/** `createApiKey` in a transaction of its own (the developer settings page). */
export const issueApiKey = (s: Services, o: CreateKeyOptions): Promise<{ key: ApiKey; token: string }> =>
  inTransaction(s, (m) => createApiKey(m, s.now(), o));

/** `revokeApiKey` of the user's own key, in a transaction of its own (the developer settings page). */
export const revokeOwnApiKey = (s: Services, id: string, userId: string): Promise<{ runsEnded: string[] }> =>
  inTransaction(s, (m) => revokeApiKey(m, s.now(), id, userId));

export type { ApiKey };
