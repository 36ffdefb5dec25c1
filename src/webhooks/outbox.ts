import type { EntityManager } from 'typeorm';
import { sql } from '../../db/sql.js';
import type { EventRow } from '../../db/entities/index.js';
import { EVENT_CATALOG } from '../domain/catalog.js';
import { onEvent } from '../domain/events.js';
import { afterCommit } from '../../db/transaction.js';
import { signalDeliveriesCommitted } from './deliverySignal.js';
import { insertDeliveryRows, newDeliveryRow } from './deliveryStore.js';
import { snapshotOf } from './payload.js';

/** Event types that are delivered: the stable ones of the catalog (spec 6.1; `room.created` is a preview). */
export const DELIVERED_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_CATALOG.filter((e) => e.stable).map((e) => e.type));

/**
 * The transactional outbox: inside the transaction of the write that emitted the event, one delivery row
 * per active webhook of the event's room. The write, its event and its deliveries commit together or not
 * at all; the worker delivers from these rows only, never from memory. Once the transaction has committed
 * (never before, never on rollback), this process's workers are woken, so they need not wait for a poll.
 */
export async function enqueueWebhookDeliveries(m: EntityManager, event: EventRow): Promise<void> {
  if (!DELIVERED_EVENT_TYPES.has(event.type)) return;
  const hooks = await sql<{ id: string }>(m, 'SELECT "id" FROM "webhooks" WHERE "roomId" = ? AND "active" = ? ORDER BY "id"', [event.roomId, true]);
  if (!hooks.rows.length) return;
  const now = new Date(event.createdAt);
  const snapshot = snapshotOf(event);
  await insertDeliveryRows(m, hooks.rows.map((h) => newDeliveryRow(m, h.id, snapshot, now)));
  const ds = m.connection;
  afterCommit(m, () => signalDeliveriesCommitted(ds));
}

/** Registers the outbox observer with the domain's event emitter (once per process; called by openRuntime). */
export function registerWebhookOutbox(): void {
  onEvent(enqueueWebhookDeliveries);
}
