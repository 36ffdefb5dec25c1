import type { EntityManager } from 'typeorm';
import { isPostgres, LIMIT_PARAM, sql } from '../../db/sql.js';
import { iso } from './time.js';

// How an agent run ends: once, with every delegated token minted for it. In the domain, because
// revoking the credential that started a run ends the run too (apiKeys.ts); src/agents/ starts and invokes runs.

export interface RunEnd {
  status: 'succeeded' | 'failed' | 'canceled';
  error?: string | null;
  output?: unknown;
  lastStatusCode?: number | null;
}

/**
 * Ends a run, once: only a queued or running run changes (optionally only while `leaseOwner` holds it), and
 * in the same transaction every delegated token minted for it, and their grants, are revoked. True for the
 * one caller that ended it.
 */
export async function finishRun(
  m: EntityManager,
  now: Date,
  runId: string,
  end: RunEnd,
  leaseOwner?: string,
): Promise<boolean> {
  const t = iso(now);
  const output = end.output === undefined || end.output === null ? null : JSON.stringify(end.output);
  const params: unknown[] = [end.status, end.error ?? null, output, t, t, runId];
  let where = 'WHERE "id" = ? AND "status" IN (\'queued\', \'running\')';
  if (leaseOwner) {
    where += ' AND "leaseOwner" = ?';
    params.push(leaseOwner);
  }
  const statusCode = end.lastStatusCode === undefined ? '' : ', "lastStatusCode" = ?';
  if (statusCode) params.splice(5, 0, end.lastStatusCode);
  const r = await sql(
    m,
    'UPDATE "agent_runs" SET "status" = ?, "error" = ?, "output" = ?, "finishedAt" = ?, "updatedAt" = ?, ' +
      `"leaseOwner" = NULL, "leaseUntil" = NULL, "awaitingCompletion" = ${isPostgres(m.connection) ? 'false' : '0'}${statusCode} ${where}`,
    params,
  );
  if (r.affected !== 1) return false;
  await revokeRunTokens(m, now, runId);
  return true;
}

/** Revokes every delegated token of a run and its grant: they stop working at once. */
export async function revokeRunTokens(m: EntityManager, now: Date, runId: string): Promise<void> {
  const t = iso(now);
  await sql(
    m,
    'UPDATE "oauth_grants" SET "revokedAt" = ? WHERE "revokedAt" IS NULL AND "id" IN (SELECT "grantId" FROM "oauth_tokens" WHERE "agentRunId" = ?)',
    [t, runId],
  );
  await sql(m, 'UPDATE "oauth_tokens" SET "revokedAt" = ? WHERE "agentRunId" = ? AND "revokedAt" IS NULL', [t, runId]);
}

/** Why a run's starting credential no longer stands (see `STARTER_REVOKED`). */
export type RevokedStarter = 'api_key' | 'token' | 'user';

const KEY_REVOKED =
  'ar."apiKeyId" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "api_keys" k WHERE k."id" = ar."apiKeyId" AND k."revokedAt" IS NULL)';
// a token purged after its expiry counts as gone: purging waits a day past expiry, far beyond a run's deadline
const TOKEN_REVOKED =
  'ar."tokenId" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "oauth_tokens" t WHERE t."id" = ar."tokenId" AND t."revokedAt" IS NULL ' +
  'AND EXISTS (SELECT 1 FROM "oauth_grants" g WHERE g."id" = t."grantId" AND g."revokedAt" IS NULL))';
const USER_GONE =
  'NOT EXISTS (SELECT 1 FROM "users" u WHERE u."id" = ar."userId") ' +
  'OR NOT EXISTS (SELECT 1 FROM "memberships" ms WHERE ms."userId" = ar."userId" AND ms."organizationId" = ar."organizationId")';

/**
 * A condition on `"agent_runs" ar`: the credential that started the run no longer stands. Its API key was
 * revoked (or deleted), its OAuth token or that token's grant was revoked (or purged), or the delegating user
 * is gone or no longer a member of the run's organization. Such a run's delegated token must not act: the
 * authority it borrowed was withdrawn (`resolveDelegatedToken` refuses it, the worker ends it).
 */
export const STARTER_REVOKED = `((${KEY_REVOKED}) OR (${TOKEN_REVOKED}) OR (${USER_GONE}))`;

/** Which of the three it is, as a column (`RevokedStarter`, or NULL while the credential stands). */
export const REVOKED_STARTER_COLUMN = `CASE WHEN (${KEY_REVOKED}) THEN 'api_key' WHEN (${TOKEN_REVOKED}) THEN 'token' WHEN (${USER_GONE}) THEN 'user' ELSE NULL END`;

const REVOKED_REASON: Record<RevokedStarter, string> = {
  api_key: 'credential_revoked: the API key that started this run was revoked',
  token: 'credential_revoked: the OAuth token that started this run was revoked',
  user: 'credential_revoked: the delegating user is no longer a member of the organization',
};

/** Runs ended by one call at most (a key revoked with more live runs ends the rest as they are next looked at). */
const MAX_ENDED_AT_ONCE = 1000;

/**
 * Ends (`canceled`, error `credential_revoked: …`) the live runs whose starting credential no longer stands,
 * all of them or only one run's or one API key's, with their delegated tokens, in the caller's transaction.
 * Returns the ids of the runs it ended.
 */
export async function endRunsOfRevokedStarters(
  m: EntityManager,
  now: Date,
  only: { runId?: string; apiKeyId?: string } = {},
): Promise<string[]> {
  let where = `ar."status" IN ('queued', 'running') AND ${STARTER_REVOKED}`;
  const params: unknown[] = [];
  if (only.runId !== undefined) {
    where += ' AND ar."id" = ?';
    params.push(only.runId);
  }
  if (only.apiKeyId !== undefined) {
    where += ' AND ar."apiKeyId" = ?';
    params.push(only.apiKeyId);
  }
  const rows = (
    await sql<{ id: string; why: RevokedStarter }>(
      m,
      `SELECT ar."id", ${REVOKED_STARTER_COLUMN} AS "why" FROM "agent_runs" ar WHERE ${where} ORDER BY ar."id" ${LIMIT_PARAM}`,
      [...params, MAX_ENDED_AT_ONCE],
    )
  ).rows;
  const ended: string[] = [];
  for (const r of rows) {
    if (await finishRun(m, now, r.id, { status: 'canceled', error: REVOKED_REASON[r.why] })) ended.push(r.id);
  }
  return ended;
}
