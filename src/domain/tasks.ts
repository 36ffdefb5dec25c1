import type { EntityManager } from 'typeorm';
import { RoomMember, Task, type TaskStatus } from '../../db/entities/index.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { notFound, ruleViolation, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { keysetPage, type PageInput } from './paging.js';
import { iso } from './time.js';

export interface TaskFields {
  title?: string;
  description?: string;
  status?: TaskStatus;
  assigneeId?: string | null;
  startDate?: string | null;
  dueDate?: string | null;
}

/** Rules every task keeps: a title, an assignee who is a (human) room member, start on or before due. */
async function checkTask(m: EntityManager, roomId: string, t: Task): Promise<void> {
  if (!t.title.trim()) throw validationError('Title must not be empty', { field: 'title' });
  if (t.assigneeId && !(await m.countBy(RoomMember, { roomId, userId: t.assigneeId }))) {
    throw ruleViolation('The assignee must be a member of the room', { field: 'assigneeId' });
  }
  if (t.startDate && t.dueDate && t.startDate > t.dueDate) {
    throw ruleViolation('startDate must not be after dueDate', { field: 'dueDate' });
  }
}

export async function listTasks(m: EntityManager, actor: Actor, roomId: string, page: PageInput & { since?: string }, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  const qb = m.getRepository(Task).createQueryBuilder('x').where('x.roomId = :roomId', { roomId });
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  if (page.since) qb.andWhere('x.createdAt >= :since', { since: page.since });
  return keysetPage(qb, 'x.id', (r) => r.id, page, secret);
}

export async function getTask(m: EntityManager, actor: Actor, roomId: string, taskId: string): Promise<Task> {
  await requireRoom(m, actor, roomId, 'read');
  const task = await m.findOneBy(Task, { id: taskId, roomId });
  if (!task) throw notFound('Task');
  return task;
}

export async function createTask(m: EntityManager, now: Date, actor: Actor, roomId: string, f: TaskFields & { title: string }) {
  const room = await requireRoom(m, actor, roomId, 'write');
  const task = m.create(Task, {
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
  });
  await checkTask(m, roomId, task);
  await m.insert(Task, task);
  await emitEvent(m, { type: 'task.created', room, object: { type: 'task', id: task.id }, actor, now });
  return task;
}

export async function updateTask(m: EntityManager, now: Date, actor: Actor, roomId: string, taskId: string, f: TaskFields) {
  const room = await requireRoom(m, actor, roomId, 'write');
  const task = await m.findOneBy(Task, { id: taskId, roomId });
  if (!task) throw notFound('Task');
  Object.assign(task, Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)), { updatedAt: iso(now) });
  await checkTask(m, roomId, task);
  await m.save(Task, task);
  await emitEvent(m, { type: 'task.updated', room, object: { type: 'task', id: task.id }, actor, now });
  return task;
}
