import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { WebhookDelivery } from '../../db/entities/index.js';
import {
  type DeliveryResult,
  deliveriesOfWebhook,
  insertDeliveries,
  leaseDueDeliveries,
  releaseDelivery,
  writeDeliveryResult,
} from '../../db/stores/deliveries.js';
import { type DeliveryWebhook, deliveryWebhooks } from '../../db/stores/webhooks.js';
import { newId } from '../domain/ids.js';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, type Page, type PageInput } from '../domain/paging.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { MAX_ATTEMPTS } from './constants.js';
import { type AttemptBookkeeping, type MadeAttempt, recordAttempts } from './attemptLog.js';
import type { EventSnapshot } from './payload.js';

/** A new delivery job: a fresh `deliveryId` (UUID), due at once, not leased unless `lease` is given. */
export function newDeliveryRow(
  _m: EntityManager,
  webhookId: string,
  e: EventSnapshot,
  now: Date,
  o: { maxAttempts?: number; redeliveryOf?: string; lease?: { owner: string; until: Date } } = {},
): WebhookDelivery {
  return Object.assign(new WebhookDelivery(), {
    id: newId('whd', now.getTime()),
    webhookId,
    roomId: e.roomId,
    eventId: e.id,
    eventType: e.type,
    deliveryId: randomUUID(),
    payload: JSON.stringify(e),
    state: 'pending',
    attempts: 0,
    maxAttempts: o.maxAttempts ?? MAX_ATTEMPTS,
    nextAttemptAt: iso(now),
    leaseOwner: o.lease?.owner ?? null,
    leaseUntil: o.lease ? iso(o.lease.until) : null,
    statusCode: null,
    durationMs: null,
    responseBody: null,
    lastError: null,
    finalizedAt: null,
    redeliveryOf: o.redeliveryOf ?? null,
    createdAt: iso(now),
  } satisfies WebhookDelivery);
}

/** Inserts delivery rows in the caller's transaction, one multi-row INSERT per 500 rows (no ORM round trip per row). */
export async function insertDeliveryRows(m: EntityManager, rows: WebhookDelivery[]): Promise<void> {
  await insertDeliveries(m, rows);
}

export type { DeliveryWebhook };

/** A claimed delivery and its webhook as of the claim (null: deleted meanwhile). */
export interface ClaimedDelivery {
  row: WebhookDelivery;
  webhook: DeliveryWebhook | null;
}

/**
 * Claims up to `limit` due deliveries for `owner` until `leaseUntil`, with their webhooks, in one
 * transaction: pending, due, and not leased (or the lease expired: its holder crashed). PostgreSQL skips
 * rows another worker is claiming (`FOR UPDATE SKIP LOCKED`); SQLite has one writer, so the conditional
 * UPDATE is already atomic. The UPDATE returns the claimed rows themselves and one statement loads their
 * webhooks. `before` runs first in the same transaction (the worker promotes ended rotations there).
 */
export async function claimDueBatch(
  s: Services,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
  before?: (m: EntityManager) => Promise<unknown>,
): Promise<ClaimedDelivery[]> {
  const { rows, hooks } = await inTransaction(s, async (m) => {
    await before?.(m);
    const claimed = await leaseDueDeliveries(m, owner, iso(now), iso(leaseUntil), limit);
    if (!claimed.length) return { rows: [], hooks: [] };
    return { rows: claimed, hooks: await deliveryWebhooks(m, [...new Set(claimed.map((r) => r.webhookId))]) };
  });
  const byId = new Map(hooks.map((w) => [w.id, w]));
  return rows
    .sort((a, b) => (a.nextAttemptAt + a.id < b.nextAttemptAt + b.id ? -1 : 1))
    .map((row) => ({ row, webhook: byId.get(row.webhookId) ?? null }));
}

/** claimDueBatch without the webhooks: the claimed rows, oldest due first. */
export async function claimDueDeliveries(
  s: Services,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
  before?: (m: EntityManager) => Promise<unknown>,
): Promise<WebhookDelivery[]> {
  return (await claimDueBatch(s, owner, now, leaseUntil, limit, before)).map((c) => c.row);
}

/** What an attempt changes on its row (updateAfterAttempt): `nextAttemptAt` when retried, `finalizedAt` when final. */
export type AttemptUpdate = DeliveryResult;

/** One row to settle: an attempt's result, or (`update` null) a lease given back untouched or deferred. */
export interface Settlement {
  id: string;
  update: AttemptUpdate | null;
  /** With `update` null: the row is due again at this time (the throttle held it back; no attempt counted). */
  deferTo?: string;
  /** The attempt itself, for its record and the webhook's failure streak (attemptLog.ts). */
  made?: MadeAttempt;
}

/**
 * Writes the results of several attempts (and gives back untouched leases) in ONE transaction, each row
 * only while `owner` still holds its lease (an expired lease taken over by another worker is left alone).
 * Returns, per settlement, whether it was written. If the transaction fails nothing is written and the
 * leases expire: the rows are attempted again (at least once).
 */
export async function settleDeliveries(
  s: Services,
  owner: string,
  settlements: Settlement[],
  books?: AttemptBookkeeping,
): Promise<boolean[]> {
  if (!settlements.length) return [];
  return inTransaction(s, (m) => settleIn(m, owner, settlements, books));
}

/**
 * settleDeliveries inside the caller's transaction (the worker records with its next claim). With `books`,
 * the attempts of the settlements are recorded too (every attempt made, even one whose lease was lost
 * meanwhile: the receiver got it).
 */
export async function settleIn(
  m: EntityManager,
  owner: string,
  settlements: Settlement[],
  books?: AttemptBookkeeping,
): Promise<boolean[]> {
  const written: boolean[] = [];
  for (const { id, update, deferTo } of settlements)
    written.push(
      update ? await writeDeliveryResult(m, id, owner, update) : await releaseDelivery(m, id, owner, deferTo),
    );
  const made = settlements.flatMap((x) => (x.made ? [x.made] : []));
  if (books && made.length) await recordAttempts(m, made, books);
  return written;
}

/** Gives a lease back untouched (the worker stops before or during an attempt, which then does not count). */
export async function releaseLease(s: Services, id: string, owner: string): Promise<void> {
  await settleDeliveries(s, owner, [{ id, update: null }]);
}

/** Delivery history of one webhook, newest first, with an opaque signed cursor (keyset on the row id). */
export async function listWebhookDeliveries(
  m: EntityManager,
  webhookId: string,
  page: PageInput,
  secret: string,
): Promise<Page<WebhookDelivery>> {
  const limit = page.limit ?? DEFAULT_LIMIT;
  const rows = await deliveriesOfWebhook(
    m,
    webhookId,
    page.cursor ? decodeCursor(secret, page.cursor) : undefined,
    limit + 1,
  );
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { data, nextCursor: more ? encodeCursor(secret, data[data.length - 1].id) : null };
}
