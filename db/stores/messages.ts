import type { DataSource, EntityManager } from 'typeorm';
import type { Message } from '../entities/index.js';
import { sql } from '../sql.js';
import { tableColumns } from './columns.js';
import { keysetRows, type KeysetBounds } from './paging.js';

/** Messages: the hottest write and list of the API, prepared SQL over one column list. */
export const MESSAGES = tableColumns<Message>('messages', [
  'id',
  'roomId',
  'authorId',
  'postedBy',
  'body',
  'createdAt',
  'agentRunId',
]);

/** A page of the room's messages, created at or after `since` when given (fixed-width ISO 8601 text). */
export async function messagesPage(
  m: EntityManager,
  roomId: string,
  since: string | undefined,
  bounds: KeysetBounds,
): Promise<Message[]> {
  return keysetRows<Message>(
    m,
    {
      select: `SELECT ${MESSAGES.list()} FROM "messages" WHERE "roomId" = ?${since ? ' AND "createdAt" >= ?' : ''}`,
      params: since ? [roomId, since] : [roomId],
      key: '"id"',
    },
    bounds,
  );
}

export async function insertMessage(m: EntityManager, msg: Message): Promise<void> {
  await sql(m, MESSAGES.insert, MESSAGES.values(msg));
}

const MESSAGE_IN_ROOM = 'SELECT 1 FROM "messages" WHERE "id" = ? AND "roomId" = ?';

export async function messageInRoom(db: DataSource | EntityManager, roomId: string, id: string): Promise<boolean> {
  return (await sql(db, MESSAGE_IN_ROOM, [id, roomId])).rows.length > 0;
}

const MESSAGES_OF_RUN = 'SELECT "id" FROM "messages" WHERE "agentRunId" = ? ORDER BY "id"';

/** The ids of the messages an agent run posted, in creation order. */
export async function messageIdsOfRun(m: EntityManager, agentRunId: string): Promise<string[]> {
  return (await sql<{ id: string }>(m, MESSAGES_OF_RUN, [agentRunId])).rows.map((r) => r.id);
}
