import type { EntityManager } from 'typeorm';
import {
  endRunRow,
  REVOKED_STARTER_COLUMN,
  type RevokedStarter,
  revokeRunTokenRows,
  runsOfRevokedStarters,
  STARTER_REVOKED,
} from '../../db/stores/agentRuns.js';
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
  const output = end.output === undefined || end.output === null ? null : JSON.stringify(end.output);
  const row = { status: end.status, error: end.error ?? null, output, lastStatusCode: end.lastStatusCode };
  if (!(await endRunRow(m, runId, row, iso(now), leaseOwner))) return false;
  await revokeRunTokens(m, now, runId);
  return true;
}

/** Revokes every delegated token of a run and its grant: they stop working at once. */
export async function revokeRunTokens(m: EntityManager, now: Date, runId: string): Promise<void> {
  await revokeRunTokenRows(m, runId, iso(now));
}

// `STARTER_REVOKED` (a condition on `"agent_runs" ar`: the credential that started the run no longer stands) and
// `REVOKED_STARTER_COLUMN` (which of the three) are the store's; such a run's delegated token must not act: the
// authority it borrowed was withdrawn (`resolveDelegatedToken` refuses it, the worker ends it).
export { REVOKED_STARTER_COLUMN, type RevokedStarter, STARTER_REVOKED };

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
  const rows = await runsOfRevokedStarters(m, only, MAX_ENDED_AT_ONCE);
  const ended: string[] = [];
  for (const r of rows) {
    if (await finishRun(m, now, r.id, { status: 'canceled', error: REVOKED_REASON[r.why] })) ended.push(r.id);
  }
  return ended;
}
