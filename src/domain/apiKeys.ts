import type { EntityManager } from 'typeorm';
import { ApiKey, Membership, User } from '../../db/entities/index.js';
import { notFound, validationError } from './errors.js';
import { randomToken, sha256Hex } from './hashing.js';
import { newId } from './ids.js';
import { endRunsOfRevokedStarters } from './runEnd.js';
import { SCOPES } from './scopes.js';
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
  if (!(await m.countBy(User, { id: o.userId }))) throw notFound('User');
  if (o.organizationId && !(await m.countBy(Membership, { userId: o.userId, organizationId: o.organizationId }))) {
    throw validationError('The user is not a member of that organization', { field: 'organizationId' });
  }
  const prefix = `svc_${o.mode}_`;
  const token = randomToken(prefix, 32);
  const key = m.create(ApiKey, {
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
  await m.insert(ApiKey, key);
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
  const key = await m.findOneBy(ApiKey, userId ? { id, userId } : { id });
  if (!key) throw notFound('API key');
  if (!key.revokedAt) await m.update(ApiKey, { id }, { revokedAt: iso(now) });
  return { runsEnded: await endRunsOfRevokedStarters(m, now, { apiKeyId: id }) };
}

export async function listApiKeys(m: EntityManager, userId: string): Promise<ApiKey[]> {
  return m.find(ApiKey, { where: { userId }, order: { id: 'ASC' } });
}

/** The keys that act for `userId` and/or are installed for `organizationId`, oldest first (the operator's list). */
export async function listApiKeysFor(
  m: EntityManager,
  o: { userId?: string; organizationId?: string },
): Promise<ApiKey[]> {
  return m.find(ApiKey, {
    where: {
      ...(o.userId ? { userId: o.userId } : {}),
      ...(o.organizationId ? { organizationId: o.organizationId } : {}),
    },
    order: { createdAt: 'ASC', id: 'ASC' },
  });
}
