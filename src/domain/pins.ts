import type { EntityManager } from 'typeorm';
import { messageInRoom } from '../../db/stores/messages.js';
import * as store from '../../db/stores/pins.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { DomainError, notFound } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type Page, type PageInput } from './paging.js';
import { iso } from './time.js';

/** How many messages one room of an organization (or a personal room) may have pinned at once. */
export const PINS_PER_ROOM = 50;

/** A message's pin: who pinned it and when. */
export interface Pin {
  messageId: string;
  pinnedById: string;
  pinnedAt: string;
}

export type PinnedMessage = store.PinnedMessageRow;

const pinOfRow = (row: store.PinRow): Pin => ({
  messageId: row.messageId,
  pinnedById: row.pinnedById,
  pinnedAt: row.createdAt,
});

/** A message of the room, or 404 (a message of another room answers as one that does not exist). */
async function requireMessage(m: EntityManager, roomId: string, messageId: string): Promise<void> {
  if (!(await messageInRoom(m, roomId, messageId))) throw notFound('Message');
}

/**
 * Pins a message of the room; any member who may write in the room may. Pinning a pinned message changes nothing
 * and answers its pin (a pin is set, not added twice), and `message.pinned` fires once. 409 `invalid_state` when
 * the room has `PINS_PER_ROOM` pinned: the request is sound, the room's state refuses it until one is unpinned.
 */
export async function pinMessage(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  messageId: string,
): Promise<Pin> {
  const room = await requireRoom(m, actor, roomId, 'write');
  await requireMessage(m, roomId, messageId);
  await store.lockRoomPins(m, roomId);
  const pinned = await store.pinOf(m, roomId, messageId);
  if (pinned) return pinOfRow(pinned);
  if ((await store.countPins(m, roomId)) >= PINS_PER_ROOM)
    throw new DomainError('invalid_state', `A room holds at most ${PINS_PER_ROOM} pinned messages: unpin one first`, {
      details: { reason: 'pin_limit_reached', limit: PINS_PER_ROOM },
    });
  const row: store.PinRow = {
    id: newId('pin', now.getTime()),
    roomId,
    messageId,
    pinnedById: actor.userId,
    createdAt: iso(now),
  };
  if (!(await store.insertPin(m, row))) {
    // pinned meanwhile by another request: its pin stands
    const theirs = await store.pinOf(m, roomId, messageId);
    if (theirs) return pinOfRow(theirs);
  }
  await emitEvent(m, { type: 'message.pinned', room, object: { type: 'message', id: messageId }, actor, now });
  return pinOfRow(row);
}

/**
 * Unpins a message of the room, whoever pinned it; any member who may write in the room may. A message that is not
 * pinned stays so and nothing fires; `message.unpinned` fires when a pin is removed.
 */
export async function unpinMessage(
  m: EntityManager,
  now: Date,
  actor: Actor,
  roomId: string,
  messageId: string,
): Promise<{ messageId: string; pinned: false }> {
  const room = await requireRoom(m, actor, roomId, 'write');
  await requireMessage(m, roomId, messageId);
  if (await store.deletePin(m, roomId, messageId))
    await emitEvent(m, { type: 'message.unpinned', room, object: { type: 'message', id: messageId }, actor, now });
  return { messageId, pinned: false };
}

/** The pinned messages of a room the actor can read, in pin order. */
export async function listPinnedMessages(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  page: PageInput,
  secret: string,
): Promise<Page<PinnedMessage>> {
  await requireRoom(m, actor, roomId, 'read');
  return readPage<PinnedMessage>(
    page,
    secret,
    (r) => r.pinId,
    (bounds) => store.pinnedPage(m, roomId, bounds),
  );
}
