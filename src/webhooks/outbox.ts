import type { EntityManager } from 'typeorm';
import { activeWebhookFilters } from '../../db/stores/webhooks.js';
import type { EventRow, Room } from '../../db/entities/index.js';
import { activeWebhooksOf } from '../domain/access.js';
import { STABLE_EVENT_TYPES } from '../domain/catalog.js';
import type { Services } from '../domain/services.js';
import { afterCommit } from '../../db/transaction.js';
import type { WakeSignal } from '../outbox/wakeSignal.js';
import { insertDeliveryRows, newDeliveryRow } from './deliveryStore.js';
import { snapshotOf } from './payload.js';
import { webhookTakes } from './webhookConfig.js';

/**
 * A stored filter as raw SQL reads it: SQL NULL, JSON `null` or a JSON array of types. A value that is not
 * one (written by hand) counts as no filter: it must not fail the write whose transaction queues the event.
 */
export function parseEventTypes(raw: string | null): string[] | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : null;
  } catch {
    return null;
  }
}

/** Event types that are delivered: the stable ones of the catalog (`room.created` is a preview). */
export const DELIVERED_EVENT_TYPES = STABLE_EVENT_TYPES;

/**
 * The transactional outbox: inside the transaction of the write that emitted the event, one delivery row
 * per active webhook of the event's room. The write, its event and its deliveries commit together or not
 * at all; the worker delivers from these rows only, never from memory. Once the transaction has committed
 * (never before, never on rollback), this process's workers are woken, so they need not wait for a poll.
 */
export async function enqueueWebhookDeliveries(
  m: EntityManager,
  event: EventRow,
  room: Room,
  committed?: WakeSignal,
): Promise<void> {
  // a room whose access check for this change counted no active webhook has none to look up
  if (!DELIVERED_EVENT_TYPES.has(event.type) || activeWebhooksOf(room) === 0) return;
  const found = await activeWebhookFilters(m, event.roomId);
  // a webhook limited to other types gets no row at all: nothing to send, nothing to count as a failure
  const hooks = found.filter((h) => webhookTakes(parseEventTypes(h.eventTypes), event.type));
  if (!hooks.length) return;
  const now = new Date(event.createdAt);
  const snapshot = snapshotOf(event);
  await insertDeliveryRows(
    m,
    hooks.map((h) => newDeliveryRow(m, h.id, snapshot, now)),
  );
  if (committed) afterCommit(m, () => committed.notify());
}

/** Makes the outbox an observer of one runtime's events, waking that runtime's delivery workers (openRuntime). */
export function registerWebhookOutbox(s: Pick<Services, 'events' | 'wake'>): void {
  s.events.on((m, event, room) => enqueueWebhookDeliveries(m, event, room, s.wake.deliveries));
}
