import type { DataSource, EntityManager } from 'typeorm';
import {
  apiKeyRevocations,
  roomCountsOfUsers,
  rolesOfUsers,
  runStatuses,
  tokenStandings,
} from '../../db/stores/rightsStamps.js';
import type { Actor } from './actor.js';
import { iso } from './time.js';

/** What a long-lived stream's rights rest on: its actor's credential, person, organization and agent run. */
export type RightsHolder = Pick<Actor, 'credential' | 'userId' | 'organizationId' | 'agentRunId'>;

/**
 * A stamp per holder of what its rights rest on now: its credential revoked, gone or expired, the person's role in
 * the organization, how many rooms they are a member of, the state of the agent run a delegated token acts for. A
 * holder whose stamp changes from one read to the next has had its rights changed: its stream checks them again
 * in full. Five statements for any number of holders, instead of authenticating each one again.
 */
export async function rightsStamps(
  db: DataSource | EntityManager,
  now: Date,
  holders: readonly RightsHolder[],
): Promise<string[]> {
  if (!holders.length) return [];
  const byMethod = (method: string) =>
    holders.filter((h) => h.credential.method === method).map((h) => h.credential.id);
  const users = holders.map((h) => h.userId);
  const runs = holders.flatMap((h) => (h.agentRunId ? [h.agentRunId] : []));
  // one after the other: a tick of the watch holds one pooled connection at a time
  const keys = await apiKeyRevocations(db, byMethod('api_key'));
  const tokens = await tokenStandings(db, byMethod('oauth_bearer'));
  const roles = await rolesOfUsers(db, users);
  const rooms = await roomCountsOfUsers(db, users);
  const runStates = await runStatuses(db, runs);
  const at = iso(now);
  const credential = new Map<string, string>([
    ...keys.map((k): [string, string] => [`api_key:${k.id}`, k.revokedAt ? 'revoked' : 'ok']),
    ...tokens.map((t): [string, string] => [
      `oauth_bearer:${t.id}`,
      t.revokedAt ? 'revoked' : t.expiresAt <= at ? 'expired' : 'ok',
    ]),
  ]);
  const role = new Map(roles.map((r) => [`${r.userId}:${r.organizationId}`, r.role]));
  const roomCount = new Map(rooms.map((r) => [r.userId, Number(r.n)]));
  const run = new Map(runStates.map((r) => [r.id, r.status]));
  return holders.map((h) =>
    [
      credential.get(`${h.credential.method}:${h.credential.id}`) ?? 'gone',
      h.organizationId ? (role.get(`${h.userId}:${h.organizationId}`) ?? 'none') : '',
      roomCount.get(h.userId) ?? 0,
      h.agentRunId ? (run.get(h.agentRunId) ?? 'gone') : '',
    ].join('|'),
  );
}
