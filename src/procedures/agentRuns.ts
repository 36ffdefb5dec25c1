import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import type { AgentRun } from '../../db/entities/index.js';
import {
  cancelAgentRun,
  completeAgentRun,
  createAgentRun,
  createdByRun,
  getAgentRun,
  listAgentRuns,
} from '../agents/runs.js';
import { encodeCursor } from '../domain/paging.js';
import { idOf, listOf, pageInput, text, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { textArg, unlessNotFound } from './confirmTarget.js';
import type { ConfirmTargetOf } from './meta.js';
import { requireRoom } from '../domain/access.js';

// The agent route: run an agent through a connector, as a delegate of the invoking human. A run
// is created queued (202), invoked by the worker with a delegated token, and ends succeeded, failed or canceled.

/** Bytes of a run's output as JSON: what a connector may store with `complete_agent_run`. */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/**
 * Bytes of output one page of `list_agent_runs` carries: a page ends early (with its `nextCursor`) once its runs'
 * outputs pass it, so a page of 50 runs of large outputs stays small. Each page holds at least one run.
 */
export const PAGE_OUTPUT_BYTES = 512 * 1024;

const outputBytes = (output: string | null) => (output === null ? 0 : Buffer.byteLength(output));

/** Any JSON of at most MAX_OUTPUT_BYTES once serialized. */
const runOutput = z.unknown().superRefine((v, ctx) => {
  if (v === undefined) return;
  const json = JSON.stringify(v);
  if (json !== undefined && Buffer.byteLength(json) > MAX_OUTPUT_BYTES) {
    // (the issue does not carry the value: an error never quotes the output back)
    ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_OUTPUT_BYTES} bytes as JSON`, input: undefined });
  }
});

const CreatedObject = z.object({
  type: z.enum(['message', 'task']),
  id: z.string().meta({ example: 'task_01KAR3V6X5Q2Z8N4M7P9W1T3YB' }),
});

export const AgentRunView = z
  .object({
    id: idOf('run'),
    roomId: idOf('room'),
    connectorId: idOf('acn'),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']),
    input: z.object({ text: z.string(), recordId: idOf('rec').nullable(), taskId: idOf('task').nullable() }),
    delegatingUserId: idOf('usr').meta({ description: "The human the agent acts for: the invoking credential's user" }),
    scopes: z.array(z.string()).meta({
      description: "Scopes of the run's delegated token: the invoker's ∩ the connector's (never agent:invoke)",
    }),
    attempts: z.number().int().meta({ description: 'Invocation attempts made (at most 4)' }),
    error: z.string().nullable().meta({
      description: 'Why the run failed (or the last invocation error while retrying); null otherwise',
      example: 'connector_answer_invalid: …',
    }),
    output: z.unknown().meta({ description: "The connector's output on success (any JSON); null otherwise" }),
    created: z.array(CreatedObject).meta({ description: 'Messages and tasks the run created (they carry agentRunId)' }),
    createdAt: timestamp,
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    deadlineAt: timestamp.meta({ description: 'A run not finished by then fails with deadline_exceeded' }),
  })
  .meta({ id: 'AgentRun' });

const toRun = (r: AgentRun, created: z.infer<typeof CreatedObject>[]): z.infer<typeof AgentRunView> => ({
  id: r.id,
  roomId: r.roomId,
  connectorId: r.connectorId,
  status: r.status,
  input: { text: r.input.text, recordId: r.input.recordId ?? null, taskId: r.input.taskId ?? null },
  delegatingUserId: r.userId,
  scopes: r.scopes,
  attempts: r.attempts,
  error: r.error,
  output: r.output === null ? null : JSON.parse(r.output),
  created,
  createdAt: r.createdAt,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  deadlineAt: r.deadlineAt,
});

const runPath = '/v1/rooms/{roomId}/agent-runs';
const runIds = { roomId: idOf('room'), runId: idOf('run') };

/** What a person confirms before a run is cancelled over MCP: the run, when it started, its status. */
const runTarget: ConfirmTargetOf = async (m, actor, a) => {
  await requireRoom(m, actor, textArg(a.roomId), 'read');
  const r = await unlessNotFound(getAgentRun(m, actor, textArg(a.roomId), textArg(a.runId)));
  return (
    r && {
      id: r.id,
      version: `${r.updatedAt}|${r.status}`,
      shown: `the agent run ${r.id} started ${r.createdAt} (status: ${r.status})`,
    }
  );
};

export const agentRunsRouter = router({
  create: apiProcedure
    .meta({
      http: { method: 'POST', path: runPath, successStatus: 202 },
      tool: {
        name: 'create_agent_run',
        title: 'Run an agent',
        description:
          'Queues a run of an agent connector (list_connectors) on this room, acting for you with your scopes.',
      },
      summary: 'Run an agent through a connector',
      description:
        "Queues a run of the organization's agent connector on this room and answers 202 with it. The service then invokes the connector (a signed request carrying a delegated token: actor=agent for the calling human, the caller's scopes ∩ the connector's, this room only, valid until the run ends). 404 not_found for an unknown connector, record or task; 409 connector_inactive.",
      tags: ['agents'],
      scope: 'agent:invoke',
      units: 10,
      kind: 'write',
      errors: ['not_found', 'room_not_found', 'forbidden', 'connector_inactive'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        connectorId: idOf('acn'),
        input: z.strictObject({
          text: text(20_000)
            .min(1)
            .meta({ description: 'What the agent is asked to do', example: 'Turn these lines into tasks' }),
          recordId: idOf('rec').optional().meta({ description: 'A record of the room to work on' }),
          taskId: idOf('task').optional().meta({ description: 'A task of the room to work on' }),
        }),
      }),
    )
    .output(AgentRunView)
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) =>
        toRun(await createAgentRun(m, ctx.services.now(), ctx.services, ctx.actor, input), []),
      );
    }),

  list: apiProcedure
    .meta({
      http: { method: 'GET', path: runPath },
      tool: {
        name: 'list_agent_runs',
        title: 'List agent runs',
        description: 'Agent runs of a room, oldest first; a page ends early when its outputs are large.',
      },
      summary: 'List the agent runs of a room',
      description: `Runs of the room, oldest first. A page ends early, with its nextCursor, once its runs' outputs hold ${PAGE_OUTPUT_BYTES} bytes of JSON (at least one run a page).`,
      tags: ['agents'],
      scope: 'agent:invoke',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(listOf(AgentRunView))
    .query(async ({ ctx, input }) => {
      const m = ctx.services.ds.manager;
      const page = await listAgentRuns(m, ctx.actor, input.roomId, input, ctx.services.secret);
      // the page ends before the run whose output passes PAGE_OUTPUT_BYTES (the first run always fits)
      let bytes = 0;
      let end = 0;
      for (const r of page.data) {
        bytes += outputBytes(r.output);
        if (end > 0 && bytes > PAGE_OUTPUT_BYTES) break;
        end++;
      }
      const runs = page.data.slice(0, end);
      const nextCursor = end < page.data.length ? encodeCursor(ctx.services.secret, runs[end - 1].id) : page.nextCursor;
      return { data: await Promise.all(runs.map(async (r) => toRun(r, await createdByRun(m, r.id)))), nextCursor };
    }),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: `${runPath}/{runId}` },
      tool: {
        name: 'get_agent_run',
        title: 'Get an agent run',
        description: 'One agent run: status, error, output and the objects it created.',
      },
      summary: 'Get an agent run',
      description: 'Status, timestamps, error, output and the objects the run created.',
      tags: ['agents'],
      scope: 'agent:invoke',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject(runIds))
    .output(AgentRunView)
    .query(async ({ ctx, input }) => {
      const m = ctx.services.ds.manager;
      const run = await getAgentRun(m, ctx.actor, input.roomId, input.runId);
      return toRun(run, await createdByRun(m, run.id));
    }),

  cancel: apiProcedure
    .meta({
      http: { method: 'POST', path: `${runPath}/{runId}/cancel` },
      tool: {
        name: 'cancel_agent_run',
        title: 'Cancel an agent run',
        description: 'Cancels a queued or running agent run (invalid_state once it has ended).',
      },
      summary: 'Cancel an agent run',
      description:
        'Cancels a queued or running run: its delegated token stops working at once. 409 invalid_state when the run has already ended.',
      // a cancelled run cannot be resumed: a person confirms it over MCP (mcp/tools/confirm.ts)
      tags: ['agents'],
      scope: 'agent:invoke',
      units: 1,
      kind: 'write',
      destructive: true,
      confirmTarget: runTarget,
      errors: ['not_found', 'room_not_found', 'forbidden', 'invalid_state'],
    })
    .input(z.strictObject(runIds))
    .output(AgentRunView)
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) => {
        const run = await cancelAgentRun(m, ctx.services.now(), ctx.actor, input.roomId, input.runId);
        return toRun(run, await createdByRun(m, run.id));
      });
    }),

  complete: apiProcedure
    .meta({
      http: { method: 'POST', path: `${runPath}/{runId}/complete` },
      tool: {
        name: 'complete_agent_run',
        title: 'Complete an agent run',
        description:
          "Called by a connector with its run's own token to finish the run as succeeded or failed, with output or error.",
      },
      summary: 'Complete an agent run (the connector)',
      description:
        "The connector finishes its run later than its answer to the invocation, with the run's own delegated token (an MCP-audience token: call it as the MCP tool complete_agent_run). Any other credential answers 403 forbidden. The token stops working once the run has ended.",
      tags: ['agents'],
      scope: 'mcp:tools',
      units: 1,
      kind: 'write',
      runOnly: true,
      errors: ['not_found', 'room_not_found', 'forbidden', 'invalid_state'],
    })
    .input(
      z.strictObject({
        ...runIds,
        status: z.enum(['succeeded', 'failed']),
        output: runOutput.optional().meta({
          description: `Any JSON of at most ${MAX_OUTPUT_BYTES} bytes once serialized: what the run produced`,
        }),
        error: text(500).optional().meta({ description: 'Why it failed (status failed)' }),
      }),
    )
    .output(AgentRunView)
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) => {
        const run = await completeAgentRun(m, ctx.services.now(), ctx.actor, input.roomId, input.runId, {
          status: input.status,
          output: input.output,
          error: input.error,
        });
        return toRun(run, await createdByRun(m, run.id));
      });
    }),
});
