import type { DataSource, EntityManager } from 'typeorm';
import { ApiKey, Membership, User } from '../entities/index.js';
import { sql } from '../sql.js';

// API keys (`api_keys`). The request path's lookup and its `lastUsedAt` touch are raw statements on `sql()` (one
// prepared statement each, run on every request); the settings pages and the command line go through TypeORM's
// entity manager, whose entity is the one column list of the table.

/** A column of the key's user, as a scalar subquery of the lookup below. */
const userColumn = (column: string, as: string) =>
  `(SELECT u."${column}" FROM "users" u WHERE u."id" = k."userId") AS "${as}"`;

/**
 * The key, its user's profile, whether the user is still a member of the organization the key was installed
 * for, and that organization's plan: one statement (a request pays for it on every call). Written with scalar
 * subqueries, not joins: SQLite compiles a join with a bound parameter again on every run, which made the same
 * lookup as a join several times slower (bench/README.md). A key whose user is gone has a null `userEmail` (a NOT
 * NULL column), as the inner join had no row.
 */
const API_KEY_LOOKUP =
  'SELECT k."id", k."userId", k."organizationId", k."scopes", k."tokenHash", k."revokedAt", k."lastUsedAt", ' +
  `${userColumn('email', 'userEmail')}, ${userColumn('name', 'userName')}, ${userColumn('locale', 'userLocale')}, ${userColumn('createdAt', 'userCreatedAt')}, ` +
  '(SELECT m."id" FROM "memberships" m WHERE m."userId" = k."userId" AND m."organizationId" = k."organizationId") AS "membershipId", ' +
  '(SELECT o."plan" FROM "organizations" o WHERE o."id" = k."organizationId") AS "plan" ' +
  'FROM "api_keys" k WHERE k."tokenHash" = ?';

/** What the request path reads of a key by its hash (API_KEY_LOOKUP); `scopes` is the column's JSON text. */
export interface ApiKeyStanding {
  id: string;
  userId: string;
  organizationId: string | null;
  scopes: string;
  tokenHash: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  userEmail: string | null;
  userName: string;
  userLocale: string;
  userCreatedAt: string;
  membershipId: string | null;
  plan: string | null;
}

/** The key whose token hashes to `tokenHash`, with its user, membership and plan; undefined when none. */
export async function apiKeyByHash(db: DataSource | EntityManager, tokenHash: string) {
  return (await sql<ApiKeyStanding>(db, API_KEY_LOOKUP, [tokenHash])).rows[0] as ApiKeyStanding | undefined;
}

const TOUCH_LAST_USED =
  'UPDATE "api_keys" SET "lastUsedAt" = ? WHERE "id" = ? AND ("lastUsedAt" IS NULL OR "lastUsedAt" <= ?)';

/** Sets `lastUsedAt` to `at` unless it is later than `staleBefore` already (one writer of several wins). */
export async function touchApiKey(db: DataSource | EntityManager, id: string, at: string, staleBefore: string) {
  await sql(db, TOUCH_LAST_USED, [at, id, staleBefore]);
}

/** Whether the user exists and, when `organizationId` is given, is a member of it. */
export async function keyOwnerStanding(m: EntityManager, userId: string, organizationId: string | null) {
  const user = (await m.countBy(User, { id: userId })) > 0;
  const member = user && !!organizationId && (await m.countBy(Membership, { userId, organizationId })) > 0;
  return { user, member };
}

/** Stores a new key (its fields as the domain built them; `lastUsedAt` starts null); returns the row. */
export async function insertApiKey(m: EntityManager, fields: Omit<ApiKey, 'lastUsedAt'>): Promise<ApiKey> {
  const key = m.create(ApiKey, fields);
  await m.insert(ApiKey, key);
  return key;
}

/** A key by id, only if it belongs to `userId` when given. */
export const apiKeyById = (m: EntityManager, id: string, userId?: string): Promise<ApiKey | null> =>
  m.findOneBy(ApiKey, userId ? { id, userId } : { id });

export async function markApiKeyRevoked(m: EntityManager, id: string, at: string): Promise<void> {
  await m.update(ApiKey, { id }, { revokedAt: at });
}

/** A user's keys, by id. */
export const apiKeysOfUser = (m: EntityManager, userId: string): Promise<ApiKey[]> =>
  m.find(ApiKey, { where: { userId }, order: { id: 'ASC' } });

/** The keys that act for `userId` and/or are installed for `organizationId`, oldest first. */
export const apiKeysFor = (m: EntityManager, o: { userId?: string; organizationId?: string }): Promise<ApiKey[]> =>
  m.find(ApiKey, {
    where: {
      ...(o.userId ? { userId: o.userId } : {}),
      ...(o.organizationId ? { organizationId: o.organizationId } : {}),
    },
    order: { createdAt: 'ASC', id: 'ASC' },
  });
