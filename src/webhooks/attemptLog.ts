import type { EntityManager } from 'typeorm';
import { WebhookAttempt, type WebhookAttemptKind, type WebhookDelivery } from '../../db/entities/index.js';
import { attemptsOfDelivery, deleteAttemptsBefore, insertAttempts } from '../../db/stores/deliveries.js';
import { clearFailingSince, disableIfFailingSince, startFailingSince } from '../../db/stores/webhooks.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { TEST_EVENT_TYPE } from './constants.js';
import { classifyAttempt } from './retryPolicy.js';

/** The outcome of one attempt, before it is written. */
export interface AttemptResult {
  statusCode: number | null;
  durationMs: number | null;
  responseBody: string | null;
  error: string | null;
  /** The worker was stopped mid-attempt: the attempt does not count. */
  aborted?: boolean;
  /** What the attempt record keeps; absent only on aborted attempts. */
  record?: AttemptRecordData;
}

/** An attempt as its record keeps it (webhook_attempts). */
export interface AttemptRecordData {
  startedAt: string;
  /** Why it failed without a 2xx: `timeout`, `connection_refused`, `tls`, `ssrf_refused`, `redirect_not_followed`, … */
  errorClass: string | null;
  requestUrl: string;
  /** Headers exactly as sent, custom header values hidden; null when nothing was sent. */
  requestHeaders: Record<string, string> | null;
  requestBody: string | null;
  responseHeaders: Record<string, string> | null;
}

// Every attempt on record (webhook_attempts), and the automatic disable of a webhook whose
// deliveries have all failed for SVC_WEBHOOK_DISABLE_AFTER_HOURS.

/** What recording attempts needs besides the rows: the clock of the attempts and the disable period. */
export interface AttemptBookkeeping {
  now: Date;
  /** A webhook failing for this long without a success in between is set inactive. */
  disableAfterMs: number;
}

/** An attempt made for a delivery row, to be written with the row's new state. */
export interface MadeAttempt {
  row: WebhookDelivery;
  result: AttemptResult;
  /** The attempt's number on its row (1 for the first). */
  attemptNumber: number;
}

/** Which path made an attempt: a test row, a redelivery row, or the worker on an ordinary row. */
export const attemptKind = (row: Pick<WebhookDelivery, 'eventType' | 'redeliveryOf'>): WebhookAttemptKind =>
  row.redeliveryOf ? 'redelivery' : row.eventType === TEST_EVENT_TYPE ? 'test' : 'automatic';

/**
 * Reasons an attempt was not made that say nothing about the receiver (they neither start nor end a failure streak).
 */
const NOT_THE_RECEIVERS = new Set(['webhook_inactive', 'webhook_deleted']);

function attemptRow(a: MadeAttempt, now: Date): WebhookAttempt | null {
  const rec = a.result.record;
  if (!rec) return null;
  const w = new WebhookAttempt();
  Object.assign(w, {
    id: newId('wha', now.getTime()),
    deliveryRowId: a.row.id,
    webhookId: a.row.webhookId,
    deliveryId: a.row.deliveryId,
    attemptNumber: a.attemptNumber,
    kind: attemptKind(a.row),
    startedAt: rec.startedAt,
    durationMs: a.result.durationMs,
    statusCode: a.result.statusCode,
    errorClass: rec.errorClass,
    requestUrl: rec.requestUrl,
    requestHeaders: rec.requestHeaders ? JSON.stringify(rec.requestHeaders) : null,
    requestBody: rec.requestBody,
    responseHeaders: rec.responseHeaders ? JSON.stringify(rec.responseHeaders) : null,
    responseBody: a.result.responseBody,
    createdAt: iso(now),
  } satisfies WebhookAttempt);
  return w;
}

/**
 * Writes the attempt records of `made` and updates each webhook's failure streak, in the caller's
 * transaction: a success ends the streak, a failure starts it (if none runs), and a webhook whose streak is
 * older than the disable period is set inactive with its reason. Webhooks are updated in id order (two
 * workers settling at once lock them in the same order).
 */
export async function recordAttempts(m: EntityManager, made: MadeAttempt[], o: AttemptBookkeeping): Promise<void> {
  const rows = made.map((a) => attemptRow(a, o.now)).filter((r): r is WebhookAttempt => r !== null);
  if (rows.length) await insertAttempts(m, rows);
  // per webhook: whether a success came in this batch, and the first failure after the last success
  const health = new Map<string, { succeeded: boolean; failingSince: string | null }>();
  for (const a of made) {
    if (!a.result.record || NOT_THE_RECEIVERS.has(a.result.error ?? '')) continue;
    const h = health.get(a.row.webhookId) ?? { succeeded: false, failingSince: null };
    if (classifyAttempt(a.result.statusCode, a.result.error) === 'success')
      Object.assign(h, { succeeded: true, failingSince: null });
    else h.failingSince ??= a.result.record.startedAt;
    health.set(a.row.webhookId, h);
  }
  const disableBefore = iso(new Date(o.now.getTime() - o.disableAfterMs));
  for (const [webhookId, h] of [...health].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (h.succeeded) await clearFailingSince(m, webhookId);
    if (h.failingSince === null) continue;
    await startFailingSince(m, webhookId, h.failingSince);
    await disableIfFailingSince(m, webhookId, disableBefore, disabledReason(o.disableAfterMs), iso(o.now));
  }
}

/** The reason shown to the owner of a webhook the service set inactive. */
export function disabledReason(disableAfterMs: number): string {
  const hours = Math.round(disableAfterMs / 3_600_000);
  const period =
    hours % 24 === 0 ? `${hours / 24} day${hours === 24 ? '' : 's'}` : `${hours} hour${hours === 1 ? '' : 's'}`;
  return `Every delivery attempt failed for ${period} without a success in between, so deliveries were stopped. Fix the receiver, then activate the webhook again.`;
}

/** Attempts of one history row, oldest first. */
export async function listDeliveryAttempts(m: EntityManager, deliveryRowId: string): Promise<WebhookAttempt[]> {
  return attemptsOfDelivery(m, deliveryRowId);
}

/** Deletes attempt records older than `before` (default: the retention period, SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS). */
export async function purgeWebhookAttempts(s: Services, before?: Date): Promise<number> {
  const cutoff = before ?? new Date(s.now().getTime() - s.config.webhookAttemptRetentionDays * 86_400_000);
  return deleteAttemptsBefore(s.ds, iso(cutoff));
}
