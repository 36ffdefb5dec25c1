import type { EntityManager } from 'typeorm';
import { type AgentConnector, AgentRun, type AgentRunInput } from '../../db/entities/index.js';
import { findConnector } from '../../db/stores/connectors.js';
import {
  findRun,
  idsCreatedByRun,
  inputTargetInRoom,
  insertRun,
  newestRunsOfRooms,
  readRun,
  roomsWithRunsOf,
  runsOfRoom,
} from '../../db/stores/agentRuns.js';
import { requireRoom } from '../domain/access.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type PageInput, readPage } from '../domain/paging.js';
import { NEVER_DELEGATED } from '../domain/scopes.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { afterCommit } from '../../db/transaction.js';
import { finishRun } from '../domain/runEnd.js';
import { SURFACES } from '../http/surfaces.js';

/** Invocation attempts of a run at most (a webhook delivery's schedule). */
export const MAX_INVOCATION_ATTEMPTS = 4;
export const LIVE_STATUSES = ['queued', 'running'] as const;

/**
 * The delegated token's scopes: what the invoking credential holds ∩ what the connector may be
 * delegated, never `agent:invoke`. A connector that works through /mcp needs `mcp:tools` in both.
 */
export const delegatedScopes = (invoker: string[], connector: string[]): string[] =>
  invoker.filter((x) => connector.includes(x) && !NEVER_DELEGATED.has(x));

/**
 * Refuses a run whose delegated token could call no tool: the token works only through /mcp, which needs the MCP
 * surface's scopes on both sides (the invoker's and the connector's), so without them the run would only fail later.
 */
function refuseToolless(actor: Actor, connector: AgentConnector, scopes: string[]): void {
  const needed = SURFACES.mcp.scopes.filter((x) => !scopes.includes(x));
  if (!needed.length) return;
  const invokerLacks = needed.filter((x) => !actor.scopes.includes(x));
  if (invokerLacks.length)
    throw new DomainError(
      'insufficient_scope',
      `Missing scope: ${invokerLacks.join(' ')}. A run's delegated token works only through /mcp and needs ${invokerLacks.join(' ')}, which this credential does not hold, so the run could call no tool; nothing was started.`,
      { details: { required: invokerLacks, granted: actor.scopes } },
    );
  throw new DomainError(
    'forbidden',
    `The connector "${connector.name}" may not be delegated ${needed.join(' ')}, so its runs could call no tool; nothing was started. An organization admin can register it with ${needed.join(' ')}.`,
    { details: { connectorId: connector.id, missing: needed } },
  );
}

export interface CreateRunInput {
  roomId: string;
  connectorId: string;
  input: AgentRunInput;
}

/**
 * Starts a run in the caller's transaction: the invoker must be able to write in the room, the
 * connector must be its organization's and active, a named record or task must be the room's. The run row
 * is the outbox of its invocation: the worker, woken after the commit, invokes the connector.
 */
export async function createAgentRun(
  m: EntityManager,
  now: Date,
  s: Services,
  actor: Actor,
  o: CreateRunInput,
): Promise<AgentRun> {
  if (actor.agentRunId) throw new DomainError('forbidden', 'An agent run cannot start another run');
  const room = await requireRoom(m, actor, o.roomId, 'write');
  const connector = await findConnector(m, o.connectorId);
  if (!connector || !room.organizationId || connector.organizationId !== room.organizationId)
    throw notFound('Connector');
  if (!connector.active)
    throw new DomainError(
      'connector_inactive',
      'This agent connector is inactive; an organization admin can activate it',
    );
  const scopes = delegatedScopes(actor.scopes, connector.scopes);
  refuseToolless(actor, connector, scopes);
  if (o.input.recordId && !(await inputTargetInRoom(m, 'record', o.input.recordId, room.id))) throw notFound('Record');
  if (o.input.taskId && !(await inputTargetInRoom(m, 'task', o.input.taskId, room.id))) throw notFound('Task');
  const t = iso(now);
  const run = Object.assign(new AgentRun(), {
    id: newId('run', now.getTime()),
    connectorId: connector.id,
    roomId: room.id,
    organizationId: room.organizationId,
    userId: actor.userId,
    invokedBy: actor.kind,
    apiKeyId: actor.credential.method === 'api_key' ? actor.credential.id : null,
    tokenId: actor.credential.method === 'oauth_bearer' ? actor.credential.id : null,
    scopes,
    input: { text: o.input.text, recordId: o.input.recordId ?? null, taskId: o.input.taskId ?? null },
    status: 'queued',
    awaitingCompletion: false,
    attempts: 0,
    maxAttempts: MAX_INVOCATION_ATTEMPTS,
    nextAttemptAt: t,
    leaseOwner: null,
    leaseUntil: null,
    deadlineAt: iso(new Date(now.getTime() + s.config.agentRunDeadlineMs)),
    lastStatusCode: null,
    error: null,
    output: null,
    createdAt: t,
    startedAt: null,
    finishedAt: null,
    updatedAt: t,
  } satisfies AgentRun);
  await insertRun(m, run);
  afterCommit(m, () => s.wake.runs.notify());
  return run;
}

/** A run of a room the actor can read (404 otherwise, and for another room's run). */
export async function getAgentRun(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  runId: string,
  need: 'read' | 'write' = 'read',
): Promise<AgentRun> {
  await requireRoom(m, actor, roomId, need);
  const run = await findRun(m, runId, roomId);
  if (!run) throw notFound('Agent run');
  return run;
}

export async function listAgentRuns(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  return readPage<AgentRun>(
    page,
    secret,
    (r) => r.id,
    (b) => runsOfRoom(m, roomId, b),
  );
}

/** The newest runs of the rooms given (the developer page). */
export async function recentRunsOfRooms(m: EntityManager, roomIds: string[], limit = 20): Promise<AgentRun[]> {
  if (!roomIds.length) return [];
  return newestRunsOfRooms(m, roomIds, limit);
}

/** The rooms (still there) with runs of the organizations given, by room id; no access check (the caller's). */
export const roomsWithRuns = (m: EntityManager, organizationIds: string[]) => roomsWithRunsOf(m, organizationIds);

/** What a run created (messages and tasks carrying its id), in creation order. */
export async function createdByRun(
  m: EntityManager,
  runId: string,
): Promise<{ type: 'message' | 'task'; id: string }[]> {
  const { messages, tasks } = await idsCreatedByRun(m, runId);
  return [
    ...messages.map((id) => ({ type: 'message' as const, id })),
    ...tasks.map((id) => ({ type: 'task' as const, id })),
  ].sort((a, b) => (a.id.slice(a.id.indexOf('_')) < b.id.slice(b.id.indexOf('_')) ? -1 : 1));
}

const ended = (run: AgentRun) =>
  new DomainError('invalid_state', `This run has already ended (${run.status})`, { details: { status: run.status } });

/** Cancels a queued or running run (a room member with `agent:invoke`): its token stops working at once. */
export async function cancelAgentRun(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  runId: string,
): Promise<AgentRun> {
  const run = await getAgentRun(m, actor, roomId, runId, 'write');
  if (actor.agentRunId && actor.agentRunId !== run.id) throw notFound('Agent run');
  if (!(await finishRun(m, now, run.id, { status: 'canceled', error: 'canceled' }))) throw ended(run);
  return readRun(m, run.id);
}

/** The connector finishes its own run with the run's delegated token (`complete_agent_run`). */
export async function completeAgentRun(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  runId: string,
  end: { status: 'succeeded' | 'failed'; output?: unknown; error?: string | null },
): Promise<AgentRun> {
  const run = await getAgentRun(m, actor, roomId, runId, 'read');
  if (actor.agentRunId !== run.id)
    throw new DomainError('forbidden', "Only the run's own delegated token completes it");
  if (
    !(await finishRun(m, now, run.id, {
      status: end.status,
      output: end.output ?? null,
      error: end.status === 'failed' ? (end.error ?? 'failed') : null,
    }))
  )
    throw ended(run);
  return readRun(m, run.id);
}
