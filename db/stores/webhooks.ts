import { In, type DataSource, type EntityManager } from 'typeorm';
import { Room, User, Webhook } from '../entities/index.js';
import { sql } from '../sql.js';
import { type KeysetBounds, keysetEntities } from './paging.js';

// The `webhooks` table: a subscription's configuration, its sealed secrets and its failure streak. TypeORM for
// the configuration (entity rows with their JSON columns), raw statements (`sql()`) for what the delivery worker
// writes in its own transactions: the failure streak and the promotion of ended rotations.

export const findWebhook = (m: EntityManager, id: string): Promise<Webhook | null> => m.findOneBy(Webhook, { id });

export async function insertWebhook(m: EntityManager, w: Webhook): Promise<void> {
  await m.insert(Webhook, w);
}

/** Changes the given fields of one webhook. */
export async function updateWebhookRow(
  m: EntityManager,
  id: string,
  change: Partial<Omit<Webhook, 'id'>>,
): Promise<void> {
  await m.update(Webhook, { id }, change);
}

export async function deleteWebhookRow(m: EntityManager, id: string): Promise<void> {
  await m.delete(Webhook, { id });
}

/** A keyset page of a room's webhooks. */
export const webhooksOfRoom = (m: EntityManager, roomId: string, b: KeysetBounds): Promise<Webhook[]> =>
  keysetEntities(m.getRepository(Webhook).createQueryBuilder('w').where('w.roomId = :roomId', { roomId }), 'w.id', b);

/** Every webhook of the rooms given, oldest first. */
export const webhooksOfRooms = (m: EntityManager, roomIds: string[]): Promise<Webhook[]> =>
  roomIds.length ? m.find(Webhook, { where: { roomId: In(roomIds) }, order: { id: 'ASC' } }) : Promise.resolve([]);

/** Every webhook (or one room's), by creation time (the operator's list). */
export const allWebhooks = (m: EntityManager, roomId?: string): Promise<Webhook[]> =>
  m.find(Webhook, { where: roomId ? { roomId } : {}, order: { createdAt: 'ASC', id: 'ASC' } });

/** The active webhooks of a room with their stored event-type filter (raw JSON text or null), by id. */
export async function activeWebhookFilters(
  m: EntityManager,
  roomId: string,
): Promise<{ id: string; eventTypes: string | null }[]> {
  const found = await sql<{ id: string; eventTypes: string | null }>(
    m,
    'SELECT "id", "eventTypes" FROM "webhooks" WHERE "roomId" = ? AND "active" = ? ORDER BY "id"',
    [roomId, true],
  );
  return found.rows;
}

/** What an attempt needs of its webhook (loaded once per claimed batch, not per row). */
export type DeliveryWebhook = Pick<
  Webhook,
  | 'id'
  | 'url'
  | 'apiVersion'
  | 'secretEnc'
  | 'nextSecretEnc'
  | 'rotationEndsAt'
  | 'headersEnc'
  | 'active'
  | 'maxDeliveriesPerSecond'
>;
type DeliveryWebhookRecord = Omit<DeliveryWebhook, 'active'> & { active: boolean | number };

/** The webhooks of a claimed batch, as an attempt needs them, in one statement. */
export async function deliveryWebhooks(m: EntityManager, ids: string[]): Promise<DeliveryWebhook[]> {
  const found = await sql<DeliveryWebhookRecord>(
    m,
    'SELECT "id", "url", "apiVersion", "secretEnc", "nextSecretEnc", "rotationEndsAt", "headersEnc", "active", "maxDeliveriesPerSecond" FROM "webhooks" ' +
      `WHERE "id" IN (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  return found.rows.map((w) => ({
    ...w,
    active: Boolean(w.active),
    maxDeliveriesPerSecond: w.maxDeliveriesPerSecond === null ? null : Number(w.maxDeliveriesPerSecond),
  }));
}

/** Ends a webhook's failure streak (a success came). */
export async function clearFailingSince(m: EntityManager, id: string): Promise<void> {
  await sql(m, 'UPDATE "webhooks" SET "failingSince" = NULL WHERE "id" = ? AND "failingSince" IS NOT NULL', [id]);
}

/** Starts a webhook's failure streak at `since`, unless one runs. */
export async function startFailingSince(m: EntityManager, id: string, since: string): Promise<void> {
  await sql(m, 'UPDATE "webhooks" SET "failingSince" = ? WHERE "id" = ? AND "failingSince" IS NULL', [since, id]);
}

/** Sets an active webhook inactive with `reason` when its failure streak started at or before `failingBefore`. */
export async function disableIfFailingSince(
  m: EntityManager,
  id: string,
  failingBefore: string,
  reason: string,
  now: string,
): Promise<void> {
  await sql(
    m,
    'UPDATE "webhooks" SET "active" = ?, "disabledReason" = ?, "disabledAt" = ?, "updatedAt" = ? ' +
      'WHERE "id" = ? AND "active" = ? AND "failingSince" IS NOT NULL AND "failingSince" <= ?',
    [false, reason, now, now, id, true, failingBefore],
  );
}

/** Writes the promotion of every rotation whose period ended at or before `now` (one statement); returns how many. */
export async function promoteRotationsEndedBy(db: DataSource | EntityManager, now: string): Promise<number> {
  const r = await sql(
    db,
    'UPDATE "webhooks" SET "secretEnc" = "nextSecretEnc", "nextSecretEnc" = NULL, "rotationEndsAt" = NULL, "updatedAt" = ? ' +
      'WHERE "rotationEndsAt" IS NOT NULL AND "nextSecretEnc" IS NOT NULL AND "rotationEndsAt" <= ?',
    [now, now],
  );
  return r.affected;
}

/** A write that changes nothing, to lock the webhook's row until the caller's transaction ends (both engines). */
export async function lockWebhook(m: EntityManager, id: string): Promise<void> {
  await sql(m, 'UPDATE "webhooks" SET "updatedAt" = "updatedAt" WHERE "id" = ?', [id]);
}

/** The room a webhook is made for, read without an actor (the operator's path), or null. */
export const roomOfWebhook = (m: EntityManager, roomId: string): Promise<Room | null> =>
  m.findOneBy(Room, { id: roomId });

/** Whether the user recorded as a webhook's creator exists. */
export const creatorExists = async (m: EntityManager, userId: string): Promise<boolean> =>
  (await m.countBy(User, { id: userId })) > 0;
