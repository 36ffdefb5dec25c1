import type { EntityManager } from 'typeorm';
import type { Message } from '../entities/index.js';
import { isPostgres, sql } from '../sql.js';
import { tableColumns } from './columns.js';
import { MESSAGES } from './messages.js';
import { keysetRows, type KeysetBounds } from './paging.js';

/** A row of `message_pins`: a message pinned in its room, by whom and when; one at most per message. */
export interface PinRow {
  id: string;
  roomId: string;
  messageId: string;
  pinnedById: string;
  createdAt: string;
}

/** A pinned message as the list reads it: the message's columns, and its pin's id, pinner and time. */
export type PinnedMessageRow = Message & { pinId: string; pinnedById: string; pinnedAt: string };

/** Pinned messages: prepared SQL over one column list, as the messages they belong to. */
export const PINS = tableColumns<PinRow>('message_pins', ['id', 'roomId', 'messageId', 'pinnedById', 'createdAt']);

const PIN_OF = `SELECT ${PINS.list()} FROM "message_pins" WHERE "messageId" = ? AND "roomId" = ?`;
// the unique messageId keeps one pin per message, whoever pins it first
const INSERT_PIN = `${PINS.insert} ON CONFLICT ("messageId") DO NOTHING`;
const COUNT_PINS = 'SELECT COUNT(*) AS "n" FROM "message_pins" WHERE "roomId" = ?';
const DELETE_PIN = 'DELETE FROM "message_pins" WHERE "messageId" = ? AND "roomId" = ?';
const LOCK_ROOM = 'SELECT 1 FROM "rooms" WHERE "id" = ? FOR UPDATE';
const PINNED =
  `SELECT ${MESSAGES.list('m')}, p."id" AS "pinId", p."pinnedById", p."createdAt" AS "pinnedAt" ` +
  `FROM "message_pins" p JOIN "messages" m ON m."id" = p."messageId" WHERE p."roomId" = ?`;

/** The pin of a message of the room, or null when it is not pinned. */
export async function pinOf(m: EntityManager, roomId: string, messageId: string): Promise<PinRow | null> {
  return (await sql<PinRow>(m, PIN_OF, [messageId, roomId])).rows[0] ?? null;
}

/**
 * Holds the room's pins still until the transaction ends, so that two pins counted at once cannot both pass the
 * room's limit: PostgreSQL locks the room's row; SQLite has one writer, whose transaction already holds them.
 */
export async function lockRoomPins(m: EntityManager, roomId: string): Promise<void> {
  if (isPostgres(m.connection)) await sql(m, LOCK_ROOM, [roomId]);
}

/** How many messages of the room are pinned. */
export async function countPins(m: EntityManager, roomId: string): Promise<number> {
  return Number((await sql<{ n: number | string }>(m, COUNT_PINS, [roomId])).rows[0]?.n ?? 0);
}

/** Inserts a pin; false when the message had one already (then nothing is written). */
export async function insertPin(m: EntityManager, pin: PinRow): Promise<boolean> {
  return (await sql(m, INSERT_PIN, PINS.values(pin))).affected > 0;
}

/** Deletes the pin of a message of the room; false when it had none. */
export async function deletePin(m: EntityManager, roomId: string, messageId: string): Promise<boolean> {
  return (await sql(m, DELETE_PIN, [messageId, roomId])).affected > 0;
}

/** A page of the room's pinned messages in pin order (keyset on the pin's id). */
export async function pinnedPage(m: EntityManager, roomId: string, bounds: KeysetBounds): Promise<PinnedMessageRow[]> {
  return keysetRows<PinnedMessageRow>(m, { select: PINNED, params: [roomId], key: 'p."id"' }, bounds);
}
