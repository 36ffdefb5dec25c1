import type { EntityManager } from 'typeorm';
import type { Message } from '../../db/entities/index.js';
import { insertMessage, messagesPage } from '../../db/stores/messages.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';
import { iso } from './time.js';

export async function listMessages(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  page: PageInput & { since?: string },
  secret: string,
) {
  await requireRoom(m, actor, roomId, 'read');
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  return readPage<Message>(
    page,
    secret,
    (r) => r.id,
    (bounds) => messagesPage(m, roomId, page.since, bounds),
  );
}

/** Posts a message. The human stays the author; `postedBy` records whether an app or agent sent it. */
export async function createMessage(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  body: string,
): Promise<Message> {
  const room = await requireRoom(m, actor, roomId, 'write');
  if (!body.trim()) throw validationError('Message body must not be empty', { field: 'body' });
  const msg: Message = {
    id: newId('msg', now.getTime()),
    roomId,
    authorId: actor.userId,
    postedBy: actor.kind,
    body,
    createdAt: iso(now),
    agentRunId: actor.agentRunId ?? null,
  };
  await insertMessage(m, msg);
  await emitEvent(m, { type: 'message.created', room, object: { type: 'message', id: msg.id }, actor, now });
  return msg;
}
