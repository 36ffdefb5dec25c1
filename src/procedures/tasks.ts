import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import { createTask, getTask, listTasks, updateTask } from '../domain/tasks.js';
import {
  date,
  forModel,
  idOf,
  normalizedSince,
  pageInput,
  text,
  timeListInput,
  timestamp,
  trimmedName,
} from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { checkedListOf } from './checkedListOf.js';
import type { CatalogEntry } from '../domain/catalogEntry.js';
import type { Task } from '../../db/entities/index.js';

// The public shape of a task, and the one mapping from the entity to it.
export const TaskStatus = z.enum(['todo', 'in_progress', 'done']);
export const TaskView = z
  .object({
    id: idOf('task'),
    roomId: idOf('room'),
    title: z.string(),
    description: z.string(),
    status: TaskStatus,
    assigneeId: idOf('usr').nullable(),
    startDate: z.string().nullable(),
    dueDate: z.string().nullable(),
    createdById: idOf('usr'),
    createdAt: timestamp,
    updatedAt: timestamp,
    agentRunId: idOf('run').nullable().meta({ description: 'The agent run that created it; null when none did' }),
  })
  .meta({ id: 'Task' });
export const toTask = (t: Task): z.infer<typeof TaskView> => ({
  id: t.id,
  roomId: t.roomId,
  title: t.title,
  description: t.description,
  status: t.status,
  assigneeId: t.assigneeId,
  startDate: t.startDate,
  dueDate: t.dueDate,
  createdById: t.createdById,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  agentRunId: t.agentRunId ?? null,
});

const fields = {
  // (their names say it all to a model; OpenAPI keeps the descriptions)
  title: forModel(trimmedName(500).meta({ description: 'Title (trimmed)', example: 'Draft the release notes' }), null),
  description: forModel(text(20_000).meta({ description: 'Free text' }), null),
  status: TaskStatus,
  assigneeId: idOf('usr').nullable().meta({ description: 'A human member of the room; agents are never assignees' }),
  startDate: forModel(
    date.nullable().meta({ description: 'First day of the task; not after dueDate (else 400 rule_violation)' }),
    'First day',
  ),
  dueDate: forModel(
    date.nullable().meta({ description: 'Last day of the task; not before startDate (else 400 rule_violation)' }),
    'Last day',
  ),
};

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
// how `svc trigger` fires them: a task created, then changed
const newTask = { method: 'POST', path: 'tasks', body: { title: 'svc trigger {now}' }, saves: 'task' } as const;

export const taskEvents = [
  {
    type: 'task.created',
    objectType: 'task',
    description: 'A task was created',
    stable: true,
    v1: false,
    trigger: { calls: [newTask] },
  },
  {
    type: 'task.updated',
    objectType: 'task',
    description: 'A task was updated (including a period change)',
    stable: true,
    v1: true,
    trigger: {
      calls: [newTask, { method: 'PATCH', path: 'tasks/{task}', body: { title: 'svc trigger (updated) {now}' } }],
    },
  },
] as const satisfies readonly CatalogEntry[];

export const tasksRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/tasks' },
      tool: {
        name: 'list_tasks',
        title: 'List tasks',
        description:
          'Tasks of a room, oldest first (order=desc: newest first; since: from a time), with status and assignee names.',
      },
      summary: 'List tasks',
      description:
        'Tasks of a room, oldest first (`order=desc`: newest first); `since` keeps those created at or after that time.',
      tags: ['tasks'],
      scope: 'tasks:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput, ...timeListInput }))
    .output(checkedListOf(TaskView))
    .query(async ({ ctx, input }) => {
      const page = await listTasks(
        ctx.services.ds.manager,
        ctx.actor,
        input.roomId,
        { ...input, since: normalizedSince(input.since) },
        ctx.services.secret,
      );
      return { data: page.data.map(toTask), nextCursor: page.nextCursor };
    }),

  create: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms/{roomId}/tasks', successStatus: 201 },
      tool: {
        name: 'create_task',
        title: 'Create a task',
        description: 'Creates a task in a room; the assignee must be a room member, startDate not after dueDate.',
      },
      summary: 'Create a task',
      description:
        'Creates a task in a room. Fires task.created. Rules the schema cannot state (400 rule_violation): the assignee is a member of the room; startDate is not after dueDate.',
      tags: ['tasks'],
      scope: 'tasks:write',
      units: 2,
      kind: 'write',
      errors: ['not_found', 'room_not_found', 'forbidden', 'rule_violation'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        title: fields.title,
        description: fields.description.optional(),
        status: fields.status.optional(),
        assigneeId: fields.assigneeId.optional(),
        startDate: fields.startDate.optional(),
        dueDate: fields.dueDate.optional(),
      }),
    )
    .output(TaskView)
    .mutation(async ({ ctx, input }) => {
      const { roomId, ...f } = input;
      return inWriteTransaction(ctx, async (m) =>
        toTask(await createTask(m, ctx.services.now(), ctx.actor, roomId, f)),
      );
    }),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/tasks/{taskId}' },
      tool: { name: 'get_task', title: 'Get a task', description: 'One task by id.' },
      summary: 'Get a task',
      description: 'One task.',
      tags: ['tasks'],
      scope: 'tasks:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), taskId: idOf('task') }))
    .output(TaskView)
    .query(async ({ ctx, input }) =>
      toTask(await getTask(ctx.services.ds.manager, ctx.actor, input.roomId, input.taskId)),
    ),

  update: apiProcedure
    .meta({
      http: { method: 'PATCH', path: '/v1/rooms/{roomId}/tasks/{taskId}' },
      tool: {
        name: 'update_task',
        title: 'Update a task',
        description: 'Changes any fields of a task (rules of create_task).',
      },
      summary: 'Update a task',
      description:
        "Changes any of a task's fields (a Gantt period change is a startDate/dueDate change). Fires task.updated. Rules the schema cannot state (400 rule_violation): the assignee is a member of the room; startDate is not after dueDate, as they are after the change.",
      tags: ['tasks'],
      scope: 'tasks:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: ['not_found', 'room_not_found', 'forbidden', 'rule_violation'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        taskId: idOf('task'),
        title: fields.title.optional(),
        description: fields.description.optional(),
        status: fields.status.optional(),
        assigneeId: fields.assigneeId.optional(),
        startDate: fields.startDate.optional(),
        dueDate: fields.dueDate.optional(),
      }),
    )
    .output(TaskView)
    .mutation(async ({ ctx, input }) => {
      const { roomId, taskId, ...f } = input;
      return inWriteTransaction(ctx, async (m) =>
        toTask(await updateTask(m, ctx.services.now(), ctx.actor, roomId, taskId, f)),
      );
    }),
});
