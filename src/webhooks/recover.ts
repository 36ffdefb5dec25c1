import type { EntityManager } from 'typeorm';
import type { Actor } from '../domain/actor.js';
import { DomainError, ruleViolation, validationError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { failedUndelivered } from '../../db/stores/deliveries.js';
import { lockWebhook } from '../../db/stores/webhooks.js';
import { afterCommit, inTransaction } from '../../db/transaction.js';
import type { WebhookDelivery } from '../../db/entities/index.js';
import { TEST_EVENT_TYPE } from './constants.js';
import { insertDeliveryRows, newDeliveryRow } from './deliveryStore.js';
import { parseSnapshot } from './payload.js';
import { loadWebhook, webhookTakes } from './webhookConfig.js';

export interface RecoverInput {
  roomId?: string;
  webhookId: string;
  /** ISO 8601: deliveries that finally failed at or after this time are queued again. */
  since: string;
}

const DAY_MS = 86_400_000;

/**
 * Checks `since`: a time (with its offset), not in the future, and no older than the attempt retention
 * (SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS), so one call reaches a bounded span of the history.
 */
export function recoverSince(s: Services, raw: string): Date {
  const since = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(since.getTime())) {
    throw validationError('since must be an ISO 8601 time, e.g. 2026-11-22T09:30:00Z', { field: 'since' });
  }
  const now = s.now();
  // a well-formed time outside the allowed span breaks a rule, not the schema (400 rule_violation)
  if (since.getTime() > now.getTime())
    throw ruleViolation('since is in the future', { field: 'since', reason: 'future' });
  const days = s.config.webhookAttemptRetentionDays;
  const oldest = new Date(now.getTime() - days * DAY_MS);
  if (since.getTime() < oldest.getTime()) {
    throw ruleViolation(
      `since is older than the ${days}-day retention of delivery attempts; the oldest allowed is ${iso(oldest)}`,
      {
        field: 'since',
        reason: 'older_than_retention',
        oldest: iso(oldest),
      },
    );
  }
  return since;
}

/**
 * Queues once more every event whose delivery to this webhook finally failed at or after `since`: one new
 * outbox row per event (same event id, new delivery id, `redeliveryOf` the failed row, the usual retries),
 * written in ONE transaction, so a crash queues all of them or none, and the worker sends them. An event
 * is skipped when any of its deliveries to this webhook succeeded (the receiver has it) or is still
 * pending (already on its way: a second recover, or one repeated in a loop, queues nothing twice). Test
 * events and types the webhook's filter now excludes are not queued. 409 `webhook_inactive` as redeliver.
 * `write` runs that transaction: a procedure passes its write transaction, so an Idempotency-Key's answer is
 * stored with the queued rows (both commit, or neither).
 */
export async function recoverWebhookDeliveries(
  s: Services,
  actor: Actor | undefined,
  input: RecoverInput,
  write: (fn: (m: EntityManager) => Promise<{ queued: number }>) => Promise<{ queued: number }> = (fn) =>
    inTransaction(s, fn),
): Promise<{ queued: number }> {
  const since = recoverSince(s, input.since);
  return write(async (m) => {
    const webhook = await loadWebhook(m, input.webhookId, actor, input.roomId);
    if (!webhook.active)
      throw new DomainError(
        'webhook_inactive',
        'The webhook is inactive; activate it before recovering its deliveries',
      );
    // a write to the webhook first: two recovers of one webhook then run one after the other (both
    // engines lock the row), so the second sees the rows the first queued
    await lockWebhook(m, webhook.id);
    const failed = await failedUndelivered(m, webhook.id, iso(since), TEST_EVENT_TYPE);
    // the latest failed row of each event, in the order the events failed
    const byEvent = new Map<string, WebhookDelivery>();
    for (const row of failed) {
      byEvent.delete(row.eventId);
      byEvent.set(row.eventId, row);
    }
    const now = s.now();
    const rows = [];
    for (const row of byEvent.values()) {
      const event = parseSnapshot(row.payload);
      if (!event || !webhookTakes(webhook.eventTypes, event.type)) continue;
      rows.push(newDeliveryRow(m, webhook.id, event, now, { redeliveryOf: row.id }));
    }
    await insertDeliveryRows(m, rows);
    if (rows.length) afterCommit(m, () => s.wake.deliveries.notify());
    return { queued: rows.length };
  });
}
