import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AuthenticatedActor } from '../../src/domain/actor.js';
import { hmacHex, safeEqual } from '../../src/domain/hashing.js';
import { errorEnvelope } from '../../src/http/envelope.js';
import { invokeTool, type ToolCallOptions, type ToolOutcome } from '../tools/invokeTool.js';
import { RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, RpcError } from '../server/rpcError.js';
import type { ToolCatalog } from '../tools/toolCatalog.js';
import { toCheckedToolResult } from '../tools/toolResult.js';

/** The tasks extension's id (2026-07-28 extension negotiation: `clientCapabilities.extensions`). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How often a client should poll a run: a run takes seconds to minutes. */
export const POLL_INTERVAL_MS = 2000;
/** The tool whose call becomes a task: the work it starts goes on after the answer. */
export const TASK_TOOL = 'create_agent_run';

/** `tasks/get` and `tasks/cancel` params (the extension's shape; other fields are ignored). */
export const TaskParams = z.looseObject({ taskId: z.string().max(300) });

/** Whether the client's per-request capabilities declare the tasks extension. */
export function declaresTasks(clientCapabilities: unknown): boolean {
  const extensions = (clientCapabilities as { extensions?: unknown } | undefined)?.extensions;
  return !!extensions && typeof extensions === 'object' && TASKS_EXTENSION in extensions;
}

const sign = (secret: string, actor: AuthenticatedActor, body: string) =>
  hmacHex(secret, `mcp-task:${actor.credential.method}:${actor.credential.id}:${body}`).slice(0, 32);

/**
 * A task id: the run's room and id, signed for the credential that started it, so another credential's
 * `tasks/get` learns nothing of it (not even that it exists), whatever its rights in the room.
 */
export const taskIdOf = (secret: string, actor: AuthenticatedActor, roomId: string, runId: string): string =>
  `${roomId}.${runId}.${sign(secret, actor, `${roomId}.${runId}`)}`;

/** The run a task id of this credential names, or null for any other id (another credential's, forged, malformed). */
export function runOfTaskId(
  secret: string,
  actor: AuthenticatedActor,
  taskId: string,
): { roomId: string; runId: string } | null {
  const [roomId, runId, sig, extra] = taskId.split('.');
  if (!roomId || !runId || !sig || extra !== undefined || !safeEqual(sig, sign(secret, actor, `${roomId}.${runId}`)))
    return null;
  return { roomId, runId };
}

function runOfTask(secret: string, actor: AuthenticatedActor, taskId: string): { roomId: string; runId: string } {
  const run = runOfTaskId(secret, actor, taskId);
  if (!run) throw unknownTask();
  return run;
}

const unknownTask = () => new RpcError(RPC_INVALID_PARAMS, 'Unknown task: no task of this credential has this taskId');

interface RunView {
  id: string;
  roomId: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
  startedAt: string | null;
}

/** The extension's Task for a run as `get_agent_run` shows it; the terminal ones carry the tool result. */
export function taskOf(taskId: string, run: RunView, result?: CallToolResult): Record<string, unknown> {
  const base = {
    taskId,
    createdAt: run.createdAt,
    lastUpdatedAt: run.finishedAt ?? run.startedAt ?? run.createdAt,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  switch (run.status) {
    case 'queued':
    case 'running':
      return { ...base, status: 'working', statusMessage: `The agent run is ${run.status}.` };
    case 'canceled':
      return { ...base, status: 'cancelled', statusMessage: 'The agent run was cancelled.' };
    default:
      // a failed run is the tool's outcome, not a JSON-RPC error: completed, its result says how it ended
      return {
        ...base,
        status: 'completed',
        statusMessage:
          run.status === 'failed' ? `The agent run failed: ${run.error ?? ''}` : 'The agent run succeeded.',
        result,
      };
  }
}

/** A refused run read or cancel as JSON-RPC: a run that is not found is an unknown task, like another credential's. */
function taskError(outcome: Extract<ToolOutcome, { ok: false }>): RpcError {
  if (outcome.error.status === 404) return unknownTask();
  return new RpcError(
    outcome.error.status >= 500 ? RPC_INTERNAL_ERROR : RPC_INVALID_PARAMS,
    outcome.error.message,
    errorEnvelope(outcome.error, outcome.requestId),
  );
}

/** `tasks/get`: the run through `get_agent_run` (its scope, rate limit, units and audit row), as a Task. */
export async function getTask(
  taskId: string,
  catalog: ToolCatalog,
  call: ToolCallOptions,
  onOutcome?: (o: ToolOutcome) => void,
): Promise<Record<string, unknown>> {
  const ids = runOfTask(call.services.secret, call.actor!, taskId);
  const outcome = await invokeTool(catalog.get('get_agent_run')!.proc, ids, call);
  onOutcome?.(outcome);
  if (!outcome.ok) throw taskError(outcome);
  return taskOf(taskId, outcome.data as RunView, toCheckedToolResult(outcome));
}

/** `tasks/update`: no task of svc waits for input, so an update of one of the credential's tasks has nothing to do. */
export function updateTask(taskId: string, call: ToolCallOptions): never {
  runOfTask(call.services.secret, call.actor!, taskId);
  throw new RpcError(RPC_INVALID_PARAMS, 'This task asks for no input: an agent run never waits for the client');
}

/**
 * `tasks/cancel`: `cancel_agent_run` through the pipeline. A run that has already ended is acknowledged too
 * (cancellation is cooperative: its `tasks/get` shows how it ended).
 */
export async function cancelTask(
  taskId: string,
  catalog: ToolCatalog,
  call: ToolCallOptions,
  onOutcome?: (o: ToolOutcome) => void,
): Promise<Record<string, never>> {
  const ids = runOfTask(call.services.secret, call.actor!, taskId);
  const outcome = await invokeTool(catalog.get('cancel_agent_run')!.proc, ids, call);
  onOutcome?.(outcome);
  if (!outcome.ok && outcome.error.code !== 'invalid_state') throw taskError(outcome);
  return {};
}
