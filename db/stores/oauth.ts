import { In, IsNull, LessThan, MoreThan, type DataSource, type EntityManager } from 'typeorm';
import {
  Membership,
  OAuthClient,
  OAuthClientApproval,
  OAuthCode,
  OAuthGrant,
  OAuthToken,
  Organization,
  User,
} from '../entities/index.js';
import { sql } from '../sql.js';

// The authorization server's rows: clients, approvals of client-id URLs, codes, grants (refresh families) and
// tokens. TypeORM's entity manager (each entity is its table's one column list), but the two single-use marks
// (a code consumed, a refresh token rotated), which are conditional updates on `sql()` whose count decides the
// one winner. What an access token's actor needs of its user and organization is read here too.

const managerOf = (db: DataSource | EntityManager): EntityManager => ('connection' in db ? db : db.manager);
const byIds = <T extends { id: string }>(m: EntityManager, entity: new () => T, ids: string[]) =>
  ids.length ? m.findBy(entity, { id: In([...new Set(ids)]) } as never) : Promise.resolve([] as T[]);

// clients

export const clientById = (db: DataSource | EntityManager, id: string): Promise<OAuthClient | null> =>
  managerOf(db).findOneBy(OAuthClient, { id });

export const clientsByIds = (m: EntityManager, ids: string[]): Promise<OAuthClient[]> => byIds(m, OAuthClient, ids);

/** Every client, oldest first. */
export const allClients = (m: EntityManager): Promise<OAuthClient[]> =>
  m.find(OAuthClient, { order: { createdAt: 'ASC', id: 'ASC' } });

export async function insertClient(m: EntityManager, fields: OAuthClient): Promise<OAuthClient> {
  const client = m.create(OAuthClient, fields);
  await m.insert(OAuthClient, client);
  return client;
}

export async function updateClient(
  m: EntityManager,
  id: string,
  fields: Partial<Pick<OAuthClient, 'name' | 'redirectUris' | 'scopes'>>,
): Promise<void> {
  await m.update(OAuthClient, { id }, fields);
}

// approvals of client-id URLs

/** The approvals of any of `patterns`, oldest first. */
export const approvalsOfPatterns = (m: EntityManager, patterns: string[]): Promise<OAuthClientApproval[]> =>
  m
    .getRepository(OAuthClientApproval)
    .createQueryBuilder('a')
    .where('a.pattern IN (:...patterns)', { patterns })
    .orderBy('a.createdAt', 'ASC')
    .addOrderBy('a.id', 'ASC')
    .getMany();

/** The approval of `pattern` for one organization (null: the server-wide one). */
export const approvalOf = (m: EntityManager, pattern: string, organizationId: string | null) =>
  m.findOneBy(OAuthClientApproval, { pattern, organizationId: organizationId ?? IsNull() });

export const approvalById = (db: DataSource | EntityManager, id: string): Promise<OAuthClientApproval | null> =>
  managerOf(db).findOneBy(OAuthClientApproval, { id });

export async function insertApproval(m: EntityManager, fields: OAuthClientApproval): Promise<OAuthClientApproval> {
  const approval = m.create(OAuthClientApproval, fields);
  await m.insert(OAuthClientApproval, approval);
  return approval;
}

/** Deletes the approval of `pattern` for one organization (null: the server-wide one); how many (0 or 1). */
export async function deleteApproval(m: EntityManager, pattern: string, organizationId: string | null) {
  return (await m.delete(OAuthClientApproval, { pattern, organizationId: organizationId ?? IsNull() })).affected ?? 0;
}

export async function deleteApprovalById(m: EntityManager, id: string): Promise<void> {
  await m.delete(OAuthClientApproval, { id });
}

/** An organization's approvals, oldest first. */
export const approvalsOfOrganization = (m: EntityManager, organizationId: string): Promise<OAuthClientApproval[]> =>
  m.find(OAuthClientApproval, { where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });

// authorization codes

export async function insertCode(m: EntityManager, row: OAuthCode): Promise<void> {
  await m.insert(OAuthCode, row);
}

export const codeByHash = (m: EntityManager, codeHash: string): Promise<OAuthCode | null> =>
  m.findOneBy(OAuthCode, { codeHash });

/** Marks a code used unless it was: true for the one caller that did. */
export async function markCodeUsed(m: EntityManager, id: string, at: string): Promise<boolean> {
  const r = await sql(m, 'UPDATE "oauth_codes" SET "usedAt" = ? WHERE "id" = ? AND "usedAt" IS NULL', [at, id]);
  return r.affected === 1;
}

/** Records the grant a code was exchanged for (a reused code then revokes it). */
export async function setCodeGrant(m: EntityManager, codeId: string, grantId: string): Promise<void> {
  await m.update(OAuthCode, { id: codeId }, { grantId });
}

// grants and tokens

export async function insertGrant(m: EntityManager, fields: OAuthGrant): Promise<OAuthGrant> {
  const grant = m.create(OAuthGrant, fields);
  await m.insert(OAuthGrant, grant);
  return grant;
}

export const grantById = (db: DataSource | EntityManager, id: string): Promise<OAuthGrant | null> =>
  managerOf(db).findOneBy(OAuthGrant, { id });

export const grantOfUser = (m: EntityManager, id: string, userId: string): Promise<OAuthGrant | null> =>
  m.findOneBy(OAuthGrant, { id, userId });

export const grantsByIds = (m: EntityManager, ids: string[]): Promise<OAuthGrant[]> => byIds(m, OAuthGrant, ids);

/** A user's grants neither revoked nor ended at `now`, newest first. */
export const liveGrantsOfUser = (m: EntityManager, userId: string, now: string): Promise<OAuthGrant[]> =>
  m.find(OAuthGrant, {
    where: { userId, revokedAt: IsNull(), expiresAt: MoreThan(now) },
    order: { createdAt: 'DESC', id: 'DESC' },
  });

/** Revokes a grant and every token under it that is not revoked yet. */
export async function revokeGrantRows(m: EntityManager, grantId: string, at: string): Promise<void> {
  await m.update(OAuthGrant, { id: grantId, revokedAt: IsNull() }, { revokedAt: at });
  await m.update(OAuthToken, { grantId, revokedAt: IsNull() }, { revokedAt: at });
}

/** Stores tokens; a delegated token (of an agent run) names its room and run. */
export async function insertTokens(
  m: EntityManager,
  rows: (Omit<OAuthToken, 'roomId' | 'agentRunId'> & Partial<Pick<OAuthToken, 'roomId' | 'agentRunId'>>)[],
): Promise<void> {
  await m.insert(OAuthToken, rows);
}

export const tokenByHash = (db: DataSource | EntityManager, tokenHash: string): Promise<OAuthToken | null> =>
  managerOf(db).findOneBy(OAuthToken, { tokenHash });

export const tokensByIds = (m: EntityManager, ids: string[]): Promise<OAuthToken[]> => byIds(m, OAuthToken, ids);

/** Marks a refresh token used unless it was: true for the one caller that rotates it. */
export async function markTokenUsed(m: EntityManager, id: string, at: string): Promise<boolean> {
  const r = await sql(m, 'UPDATE "oauth_tokens" SET "usedAt" = ? WHERE "id" = ? AND "usedAt" IS NULL', [at, id]);
  return r.affected === 1;
}

export async function revokeTokenRow(m: EntityManager, id: string, at: string): Promise<void> {
  await m.update(OAuthToken, { id, revokedAt: IsNull() }, { revokedAt: at });
}

/** Deletes codes, tokens and grants that expired before `cutoff`; how many. */
export async function deleteExpiredOAuth(ds: DataSource, cutoff: string): Promise<number> {
  let deleted = 0;
  for (const entity of [OAuthCode, OAuthToken, OAuthGrant]) {
    deleted += (await ds.getRepository(entity).delete({ expiresAt: LessThan(cutoff) })).affected ?? 0;
  }
  return deleted;
}

// what a token's actor needs of its user and organization

/** The profile an actor carries of its user, or null when the user is gone. */
export const actorUser = (m: EntityManager, id: string) =>
  m.findOne(User, { where: { id }, select: { email: true, name: true, locale: true, createdAt: true } });

export const isMember = async (m: EntityManager, userId: string, organizationId: string): Promise<boolean> =>
  (await m.countBy(Membership, { userId, organizationId })) > 0;

/** An organization's plan ('default' when the organization is gone). */
export const organizationPlan = async (m: EntityManager, id: string): Promise<string> =>
  (await m.findOneBy(Organization, { id }))?.plan ?? 'default';

/** The organizations of `ids` that exist, for their names. */
export const organizationsByIds = (m: EntityManager, ids: string[]): Promise<Organization[]> =>
  byIds(m, Organization, ids);

export const organizationExists = async (m: EntityManager, id: string): Promise<boolean> =>
  !!(await m.findOneBy(Organization, { id }));
