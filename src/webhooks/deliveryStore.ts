import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isPostgres, sql } from '../../db/sql.js';
import { WebhookDelivery } from '../../db/entities/index.js';
import { newId } from '../domain/ids.js';
import { decodeCursor, DEFAULT_LIMIT, encodeCursor, type Page, type PageInput } from '../domain/paging.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../procedures/tx.js';
import { MAX_ATTEMPTS } from './constants.js';
import type { EventSnapshot } from './payload.js';

/** A new delivery job: a fresh `deliveryId` (UUID), due at once, not leased unless `lease` is given. */
export function newDeliveryRow(
  m: EntityManager, webhookId: string, e: EventSnapshot, now: Date,
  o: { maxAttempts?: number; redeliveryOf?: string; lease?: { owner: string; until: Date } } = {},
): WebhookDelivery {
  return m.create(WebhookDelivery, {
    id: newId('whd', now.getTime()), webhookId, roomId: e.roomId, eventId: e.id, eventType: e.type, deliveryId: randomUUID(),
    payload: JSON.stringify(e), state: 'pending', attempts: 0, maxAttempts: o.maxAttempts ?? MAX_ATTEMPTS,
    nextAttemptAt: iso(now), leaseOwner: o.lease?.owner ?? null, leaseUntil: o.lease ? iso(o.lease.until) : null,
    statusCode: null, durationMs: null, responseBody: null, lastError: null, finalizedAt: null,
    redeliveryOf: o.redeliveryOf ?? null, createdAt: iso(now),
  });
}

/**
 * Claims up to `limit` due deliveries for `owner` until `leaseUntil`, in one statement: pending, due, and
 * not leased (or the lease expired: its holder crashed). PostgreSQL skips rows another worker is claiming
 * (`FOR UPDATE SKIP LOCKED`); SQLite has one writer, so the conditional UPDATE is already atomic.
 * `before` runs first in the same transaction (the worker promotes ended rotations there).
 */
export async function claimDueDeliveries(
  s: Services, owner: string, now: Date, leaseUntil: Date, limit: number, before?: (m: EntityManager) => Promise<unknown>,
): Promise<WebhookDelivery[]> {
  const pg = isPostgres(s.ds);
  const t = iso(now);
  const claimed = await inTransaction(s, async (m) => {
    await before?.(m);
    const r = await sql<{ id: string }>(
      m,
      'UPDATE "webhook_deliveries" SET "leaseOwner" = ?, "leaseUntil" = ? WHERE "id" IN (' +
        'SELECT "id" FROM "webhook_deliveries" WHERE "state" = \'pending\' AND "nextAttemptAt" <= ? ' +
        'AND ("leaseUntil" IS NULL OR "leaseUntil" <= ?) ORDER BY "nextAttemptAt", "id" LIMIT ?' +
        (pg ? ' FOR UPDATE SKIP LOCKED' : '') +
        ') RETURNING "id"',
      [owner, iso(leaseUntil), t, t, limit],
    );
    return r.rows.map((x) => x.id);
  });
  if (!claimed.length) return [];
  const rows = await s.ds.getRepository(WebhookDelivery).createQueryBuilder('d').where('d.id IN (:...ids)', { ids: claimed }).getMany();
  return rows.filter((r) => r.leaseOwner === owner).sort((a, b) => (a.nextAttemptAt + a.id < b.nextAttemptAt + b.id ? -1 : 1));
}

/** What an attempt changes on its row. */
export type AttemptUpdate = Partial<Pick<WebhookDelivery,
  'state' | 'attempts' | 'nextAttemptAt' | 'statusCode' | 'durationMs' | 'responseBody' | 'lastError' | 'finalizedAt'>>;

/** Writes an attempt's result and gives the lease back, only while `owner` still holds it. */
export async function finishAttempt(s: Services, id: string, owner: string, update: AttemptUpdate): Promise<boolean> {
  return inTransaction(s, async (m) => {
    const r = await m.update(WebhookDelivery, { id, leaseOwner: owner }, { ...update, leaseOwner: null, leaseUntil: null });
    return (r.affected ?? 0) > 0;
  });
}

/** Gives a lease back untouched (the worker stops before or during an attempt, which then does not count). */
export async function releaseLease(s: Services, id: string, owner: string): Promise<void> {
  await inTransaction(s, (m) => m.update(WebhookDelivery, { id, leaseOwner: owner }, { leaseOwner: null, leaseUntil: null }));
}

/** Delivery history of one webhook, newest first, with an opaque signed cursor (keyset on the row id). */
export async function listWebhookDeliveries(
  m: EntityManager, webhookId: string, page: PageInput, secret: string,
): Promise<Page<WebhookDelivery>> {
  const limit = page.limit ?? DEFAULT_LIMIT;
  const qb = m.getRepository(WebhookDelivery).createQueryBuilder('d').where('d.webhookId = :webhookId', { webhookId });
  if (page.cursor) qb.andWhere('d.id < :before', { before: decodeCursor(secret, page.cursor) });
  const rows = await qb.orderBy('d.id', 'DESC').limit(limit + 1).getMany();
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { data, nextCursor: more ? encodeCursor(secret, data[data.length - 1].id) : null };
}
