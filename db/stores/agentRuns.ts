import { In, type DataSource, type EntityManager } from 'typeorm';
import { AgentRun, MeetingRecord, Message, OAuthGrant, OAuthToken, Room, Task } from '../entities/index.js';
import { isPostgres, LIMIT_PARAM, sql } from '../sql.js';
import { type KeysetBounds, keysetEntities } from './paging.js';

// The `agent_runs` table (a run is the outbox row of its invocation: lease, attempts, outcome) and the delegated
// tokens minted for runs. TypeORM for the reads of the procedures and pages (entity rows with their JSON
// columns); raw statements (`sql()`, prepared once) for the worker's conditional writes, which must hold only
// while its lease does.

const LIVE = `"status" IN ('queued', 'running')`;

export async function insertRun(m: EntityManager, run: AgentRun): Promise<void> {
  await m.insert(AgentRun, run);
}

/** A run by id (of `roomId`, when given), or null. */
export const findRun = (m: EntityManager, id: string, roomId?: string): Promise<AgentRun | null> =>
  m.findOneBy(AgentRun, roomId === undefined ? { id } : { id, roomId });

/** A run known to exist, read again (after a change in the same transaction). */
export const readRun = (m: EntityManager, id: string): Promise<AgentRun> => m.findOneByOrFail(AgentRun, { id });

/** A keyset page of a room's runs. */
export const runsOfRoom = (m: EntityManager, roomId: string, b: KeysetBounds): Promise<AgentRun[]> =>
  keysetEntities(m.getRepository(AgentRun).createQueryBuilder('x').where('x.roomId = :roomId', { roomId }), 'x.id', b);

/** The newest runs of the rooms given. */
export const newestRunsOfRooms = (m: EntityManager, roomIds: string[], limit: number): Promise<AgentRun[]> =>
  m
    .getRepository(AgentRun)
    .createQueryBuilder('x')
    .where('x.roomId IN (:...roomIds)', { roomIds })
    .orderBy('x.id', 'DESC')
    .take(limit)
    .getMany();

/** The rooms (still there) that have runs of the organizations given, by room id. */
export async function roomsWithRunsOf(m: EntityManager, organizationIds: string[]): Promise<Room[]> {
  if (!organizationIds.length) return [];
  const withRuns = await m
    .getRepository(AgentRun)
    .createQueryBuilder('x')
    .select('DISTINCT x.roomId', 'roomId')
    .where('x.organizationId IN (:...orgs)', { orgs: organizationIds })
    .getRawMany<{ roomId: string }>();
  const out: Room[] = [];
  for (const { roomId } of withRuns.sort((a, b) => (a.roomId < b.roomId ? -1 : 1))) {
    const room = await m.findOneBy(Room, { id: roomId });
    if (room) out.push(room);
  }
  return out;
}

/** The room a run works in, or null (deleted meanwhile). */
export const roomOfRun = (m: EntityManager, roomId: string): Promise<Room | null> => m.findOneBy(Room, { id: roomId });

/** The connector of each run given by id (unknown ids are left out). */
export const connectorsOfRuns = (m: EntityManager, runIds: string[]): Promise<Pick<AgentRun, 'id' | 'connectorId'>[]> =>
  m.find(AgentRun, { select: { id: true, connectorId: true }, where: { id: In(runIds) } });

/** The ids of the messages and tasks a run created, each oldest first. */
export async function idsCreatedByRun(
  m: EntityManager,
  runId: string,
): Promise<{ messages: string[]; tasks: string[] }> {
  const [msgs, tasks] = await Promise.all([
    m.find(Message, { where: { agentRunId: runId }, select: { id: true }, order: { id: 'ASC' } }),
    m.find(Task, { where: { agentRunId: runId }, select: { id: true }, order: { id: 'ASC' } }),
  ]);
  return { messages: msgs.map((x) => x.id), tasks: tasks.map((x) => x.id) };
}

/** Whether the record or task a run's input names is in the room. */
export async function inputTargetInRoom(
  m: EntityManager,
  kind: 'record' | 'task',
  id: string,
  roomId: string,
): Promise<boolean> {
  return (await m.countBy(kind === 'record' ? MeetingRecord : Task, { id, roomId })) > 0;
}

/** Stores a run's delegated token with its grant (only the token's hash is in `token`). */
export async function insertDelegatedToken(m: EntityManager, grant: OAuthGrant, token: OAuthToken): Promise<void> {
  await m.insert(OAuthGrant, grant);
  await m.insert(OAuthToken, token);
}

// the worker's statements

type RunRecord = Omit<AgentRun, 'awaitingCompletion' | 'scopes' | 'input'> & {
  awaitingCompletion: boolean | number;
  scopes: string | string[];
  input: string | AgentRun['input'];
};

const parsed = (r: RunRecord): AgentRun =>
  ({
    ...r,
    awaitingCompletion: !!r.awaitingCompletion,
    scopes: typeof r.scopes === 'string' ? (JSON.parse(r.scopes) as string[]) : r.scopes,
    input: typeof r.input === 'string' ? (JSON.parse(r.input) as AgentRun['input']) : r.input,
  }) as AgentRun;

/** Whether any live run is due and not leased, a read that takes no write lock (an idle poll). */
export async function anyRunDue(ds: DataSource, now: string): Promise<boolean> {
  const due = await sql(
    ds,
    `SELECT "id" FROM "agent_runs" WHERE ${LIVE} AND "nextAttemptAt" <= ? AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) LIMIT 1`,
    [now, now],
  );
  return due.rows.length > 0;
}

/** Leases up to `limit` due live runs to `owner` until `leaseUntil` (`FOR UPDATE SKIP LOCKED` on PostgreSQL). */
export async function leaseDueRuns(
  m: EntityManager,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<AgentRun[]> {
  const rows = await sql<RunRecord>(
    m,
    'UPDATE "agent_runs" SET "leaseOwner" = ?, "leaseUntil" = ? WHERE "id" IN (' +
      `SELECT "id" FROM "agent_runs" WHERE ${LIVE} AND "nextAttemptAt" <= ? ` +
      'AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) ORDER BY "nextAttemptAt", "id" ' +
      LIMIT_PARAM +
      (isPostgres(m.connection) ? ' FOR UPDATE SKIP LOCKED' : '') +
      ') RETURNING *',
    [owner, leaseUntil, now, now, limit],
  );
  return rows.rows.map(parsed);
}

/** Gives a run's lease back (only while `owner` holds it); with `uncount`, its last attempt does not count. */
export async function releaseRun(ds: DataSource, id: string, owner: string, uncount = false): Promise<void> {
  await sql(
    ds,
    uncount
      ? 'UPDATE "agent_runs" SET "leaseOwner" = NULL, "leaseUntil" = NULL, "attempts" = "attempts" - 1 WHERE "id" = ? AND "leaseOwner" = ?'
      : 'UPDATE "agent_runs" SET "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "leaseOwner" = ?',
    [id, owner],
  );
}

/** Counts an attempt of a leased live run (status `running`); false when `owner` no longer holds it. */
export async function countRunAttempt(m: EntityManager, id: string, owner: string, now: string): Promise<boolean> {
  const counted = await sql(
    m,
    'UPDATE "agent_runs" SET "status" = \'running\', "attempts" = "attempts" + 1, "startedAt" = COALESCE("startedAt", ?), "updatedAt" = ? ' +
      `WHERE "id" = ? AND "leaseOwner" = ? AND ${LIVE}`,
    [now, now, id, owner],
  );
  return counted.affected === 1;
}

/** The connector accepted the run (it finishes it later): looked at again at its deadline, the lease given back. */
export async function awaitRunCompletion(
  ds: DataSource,
  id: string,
  owner: string,
  statusCode: number | null,
  now: string,
): Promise<void> {
  await sql(
    ds,
    `UPDATE "agent_runs" SET "awaitingCompletion" = ${isPostgres(ds) ? 'true' : '1'}, "nextAttemptAt" = "deadlineAt", "leaseOwner" = NULL, "leaseUntil" = NULL, ` +
      '"lastStatusCode" = ?, "updatedAt" = ? WHERE "id" = ? AND "leaseOwner" = ? AND "status" = \'running\'',
    [statusCode, now, id, owner],
  );
}

/** Schedules the run's next attempt at `next`, with this attempt's status code and error, the lease given back. */
export async function scheduleRunRetry(
  ds: DataSource,
  id: string,
  owner: string,
  o: { next: string; statusCode: number | null; error: string; now: string },
): Promise<void> {
  await sql(
    ds,
    'UPDATE "agent_runs" SET "nextAttemptAt" = ?, "leaseOwner" = NULL, "leaseUntil" = NULL, "lastStatusCode" = ?, "error" = ?, "updatedAt" = ? ' +
      'WHERE "id" = ? AND "leaseOwner" = ? AND "status" = \'running\'',
    [o.next, o.statusCode, o.error, o.now, id, owner],
  );
}

/** How a run ends, as its row keeps it (`output` as stored JSON text). */
export interface RunEndRow {
  status: 'succeeded' | 'failed' | 'canceled';
  error: string | null;
  output: string | null;
  /** Left as it is when undefined. */
  lastStatusCode?: number | null;
}

/** Ends a live run (only while `leaseOwner` holds it, when given); true when this call ended it. */
export async function endRunRow(
  m: EntityManager,
  runId: string,
  end: RunEndRow,
  now: string,
  leaseOwner?: string,
): Promise<boolean> {
  const params: unknown[] = [end.status, end.error, end.output, now, now, runId];
  let where = `WHERE "id" = ? AND ${LIVE}`;
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
  return r.affected === 1;
}

/** Revokes every delegated token of a run and its grant. */
export async function revokeRunTokenRows(m: EntityManager, runId: string, now: string): Promise<void> {
  await sql(
    m,
    'UPDATE "oauth_grants" SET "revokedAt" = ? WHERE "revokedAt" IS NULL AND "id" IN (SELECT "grantId" FROM "oauth_tokens" WHERE "agentRunId" = ?)',
    [now, runId],
  );
  await sql(m, 'UPDATE "oauth_tokens" SET "revokedAt" = ? WHERE "agentRunId" = ? AND "revokedAt" IS NULL', [
    now,
    runId,
  ]);
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
 * is gone or no longer a member of the run's organization.
 */
export const STARTER_REVOKED = `((${KEY_REVOKED}) OR (${TOKEN_REVOKED}) OR (${USER_GONE}))`;

/** Which of the three it is, as a column (`RevokedStarter`, or NULL while the credential stands). */
export const REVOKED_STARTER_COLUMN = `CASE WHEN (${KEY_REVOKED}) THEN 'api_key' WHEN (${TOKEN_REVOKED}) THEN 'token' WHEN (${USER_GONE}) THEN 'user' ELSE NULL END`;

/** Whether any live run's starting credential no longer stands (a read: the common answer takes no write lock). */
export async function anyStarterRevoked(ds: DataSource): Promise<boolean> {
  const r = await sql(
    ds,
    `SELECT ar."id" FROM "agent_runs" ar WHERE ar."status" IN ('queued', 'running') AND ${STARTER_REVOKED} LIMIT 1`,
  );
  return r.rows.length > 0;
}

/** Whether the credential that started this run no longer stands (a read). */
export async function starterRevoked(ds: DataSource, runId: string): Promise<boolean> {
  const r = await sql(ds, `SELECT ar."id" FROM "agent_runs" ar WHERE ar."id" = ? AND ${STARTER_REVOKED}`, [runId]);
  return r.rows.length > 0;
}

/** The live runs (all, one run's or one API key's) whose starting credential no longer stands, and why; by id. */
export async function runsOfRevokedStarters(
  m: EntityManager,
  only: { runId?: string; apiKeyId?: string },
  limit: number,
): Promise<{ id: string; why: RevokedStarter }[]> {
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
  const rows = await sql<{ id: string; why: RevokedStarter }>(
    m,
    `SELECT ar."id", ${REVOKED_STARTER_COLUMN} AS "why" FROM "agent_runs" ar WHERE ${where} ORDER BY ar."id" ${LIMIT_PARAM}`,
    [...params, limit],
  );
  return rows.rows;
}

/** A run and whether the credential that started it still stands, in one read (a delegated token's check). */
export async function runStanding(
  ds: DataSource,
  runId: string,
): Promise<{ id: string; status: string; roomId: string; userId: string; revoked: RevokedStarter | null } | undefined> {
  const r = await sql<{ id: string; status: string; roomId: string; userId: string; revoked: RevokedStarter | null }>(
    ds,
    RUN_STANDING,
    [runId],
  );
  return r.rows[0];
}
const RUN_STANDING = `SELECT ar."id", ar."status", ar."roomId", ar."userId", ${REVOKED_STARTER_COLUMN} AS "revoked" FROM "agent_runs" ar WHERE ar."id" = ?`;
