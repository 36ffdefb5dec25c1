import type { EntityManager } from 'typeorm';
import type { Task, TaskStatus } from '../../db/entities/index.js';
import { isRoomMember } from '../../db/stores/rooms.js';
import { insertTask, taskById, tasksPage, updateTaskFields, type TaskChange } from '../../db/stores/tasks.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { notFound, ruleViolation, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';
import { iso } from './time.js';

export interface TaskFields {
  title?: string;
  description?: string;
  status?: TaskStatus;
  assigneeId?: string | null;
  startDate?: string | null;
  dueDate?: string | null;
}

/** The fields a caller may change, in the order the update lists them. */
const TASK_FIELDS = [
  'title',
  'description',
  'status',
  'assigneeId',
  'startDate',
  'dueDate',
] as const satisfies readonly (keyof TaskFields)[];

/** Rules every task keeps: a title, an assignee who is a (human) room member, start on or before due. */
async function checkTask(m: EntityManager, roomId: string, t: Task): Promise<void> {
  if (!t.title.trim()) throw validationError('Title must not be empty', { field: 'title' });
  if (t.assigneeId && !(await isRoomMember(m, roomId, t.assigneeId))) {
    throw ruleViolation('The assignee must be a member of the room', { field: 'assigneeId' });
  }
  if (t.startDate && t.dueDate && t.startDate > t.dueDate) {
    throw ruleViolation('startDate must not be after dueDate', { field: 'dueDate' });
  }
}

export async function listTasks(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  page: PageInput & { since?: string },
  secret: string,
) {
  await requireRoom(m, actor, roomId, 'read');
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  return readPage<Task>(
    page,
    secret,
    (r) => r.id,
    (bounds) => tasksPage(m, roomId, page.since, bounds),
  );
}

async function findTask(m: EntityManager, roomId: string, taskId: string): Promise<Task> {
  const task = await taskById(m, roomId, taskId);
  if (!task) throw notFound('Task');
  return task;
}

export async function getTask(m: EntityManager, actor: Actor, roomId: string, taskId: string): Promise<Task> {
  await requireRoom(m, actor, roomId, 'read');
  return findTask(m, roomId, taskId);
}

export async function createTask(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  f: TaskFields & { title: string },
) {
  const room = await requireRoom(m, actor, roomId, 'write');
  const task: Task = {
    id: newId('task', now.getTime()),
    roomId,
    title: f.title,
    description: f.description ?? '',
    status: f.status ?? 'todo',
    assigneeId: f.assigneeId ?? null,
    startDate: f.startDate ?? null,
    dueDate: f.dueDate ?? null,
    createdById: actor.userId,
    createdAt: iso(now),
    updatedAt: iso(now),
    agentRunId: actor.agentRunId ?? null,
  };
  await checkTask(m, roomId, task);
  await insertTask(m, task);
  await emitEvent(m, { type: 'task.created', room, object: { type: 'task', id: task.id }, actor, now });
  return task;
}

/**
 * Changes the given fields in one statement that returns the task as it is after the change (no read before it:
 * one round trip fewer on PostgreSQL), as the transaction's last statement: its event is written first, so the
 * task's row stays locked (PostgreSQL) from its update to the commit only, not across the event's statements
 * too. A rule the result breaks (or an unknown task) throws, and the caller's transaction takes the change and
 * its event back, so a refused update leaves the task as it was.
 */
export async function updateTask(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  taskId: string,
  f: TaskFields,
) {
  const room = await requireRoom(m, actor, roomId, 'write');
  await emitEvent(m, { type: 'task.updated', room, object: { type: 'task', id: taskId }, actor, now });
  const change: TaskChange = {};
  for (const k of TASK_FIELDS) if (f[k] !== undefined) Object.assign(change, { [k]: f[k] });
  const task = await updateTaskFields(m, roomId, taskId, change, iso(now));
  if (!task) throw notFound('Task');
  await checkTask(m, roomId, task);
  return task;
}
