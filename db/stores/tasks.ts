import type { DataSource, EntityManager } from 'typeorm';
import type { Task } from '../entities/index.js';
import { sql } from '../sql.js';
import { tableColumns } from './columns.js';
import { keysetRows, type KeysetBounds } from './paging.js';

/** Tasks: listed, read and written on the request path, prepared SQL over one column list. */
export const TASKS = tableColumns<Task>('tasks', [
  'id',
  'roomId',
  'title',
  'description',
  'status',
  'assigneeId',
  'startDate',
  'dueDate',
  'createdById',
  'createdAt',
  'updatedAt',
  'agentRunId',
]);

/** The fields of a task an update may change (`updatedAt` changes with any of them). */
export type TaskChange = Partial<
  Pick<Task, 'title' | 'description' | 'status' | 'assigneeId' | 'startDate' | 'dueDate'>
>;

const TASK_BY_ID = `SELECT ${TASKS.list()} FROM "tasks" WHERE "id" = ? AND "roomId" = ?`;

/** A page of the room's tasks, created at or after `since` when given (fixed-width ISO 8601 text). */
export async function tasksPage(
  m: EntityManager,
  roomId: string,
  since: string | undefined,
  bounds: KeysetBounds,
): Promise<Task[]> {
  return keysetRows<Task>(
    m,
    {
      select: `SELECT ${TASKS.list()} FROM "tasks" WHERE "roomId" = ?${since ? ' AND "createdAt" >= ?' : ''}`,
      params: since ? [roomId, since] : [roomId],
      key: '"id"',
    },
    bounds,
  );
}

export async function taskById(m: EntityManager, roomId: string, taskId: string): Promise<Task | null> {
  return (await sql<Task>(m, TASK_BY_ID, [taskId, roomId])).rows[0] ?? null;
}

export async function insertTask(m: EntityManager, task: Task): Promise<void> {
  await sql(m, TASKS.insert, TASKS.values(task));
}

/** The update of the given fields (and `updatedAt`) of one task, returning the row as it is after it. */
const taskUpdate = (fields: readonly string[]) =>
  `UPDATE "tasks" SET ${fields.map((k) => `"${k}" = ?, `).join('')}"updatedAt" = ? WHERE "id" = ? AND "roomId" = ? RETURNING ${TASKS.list()}`;

/** Changes the given fields in one statement, returning the task as it is after it (null: no such task). */
export async function updateTaskFields(
  m: EntityManager,
  roomId: string,
  taskId: string,
  change: TaskChange,
  updatedAt: string,
): Promise<Task | null> {
  const given = (Object.keys(change) as (keyof TaskChange)[]).filter((k) => change[k] !== undefined);
  const rows = await sql<Task>(m, taskUpdate(given), [...given.map((k) => change[k]), updatedAt, taskId, roomId]);
  return rows.rows[0] ?? null;
}

const TASK_IN_ROOM = 'SELECT 1 FROM "tasks" WHERE "id" = ? AND "roomId" = ?';

export async function taskInRoom(db: DataSource | EntityManager, roomId: string, id: string): Promise<boolean> {
  return (await sql(db, TASK_IN_ROOM, [id, roomId])).rows.length > 0;
}

const TASKS_OF_RUN = 'SELECT "id" FROM "tasks" WHERE "agentRunId" = ? ORDER BY "id"';

/** The ids of the tasks an agent run created, in creation order. */
export async function taskIdsOfRun(m: EntityManager, agentRunId: string): Promise<string[]> {
  return (await sql<{ id: string }>(m, TASKS_OF_RUN, [agentRunId])).rows.map((r) => r.id);
}
