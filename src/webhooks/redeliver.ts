import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Webhook, WebhookDelivery } from '../../db/entities/index.js';
import { findDelivery, findDeliveryByUuid, readDelivery } from '../../db/stores/deliveries.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, notFound } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { inTransaction } from '../../db/transaction.js';
import { attemptDelivery, type AttemptResult, updateAfterAttempt } from './attemptDelivery.js';
import { TEST_EVENT_TYPE } from './constants.js';
import { deliveryDepsFor } from './deliveryDeps.js';
import { insertDeliveryRows, newDeliveryRow, releaseLease, settleIn } from './deliveryStore.js';
import { type EventSnapshot, parseSnapshot } from './payload.js';
import { loadWebhook } from './webhookConfig.js';

/** How long the synchronous redelivery holds its row before a worker may take it over (after a crash). */
const REDELIVER_LEASE_MS = 120_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RedeliverInput {
  roomId: string;
  webhookId: string;
  /** The history row `id` of the delivery to send again. */
  deliveryId: string;
}

/** A delivery made now, synchronously, and what its one attempt gave. */
export interface SentNow {
  delivery: WebhookDelivery;
  attempt: AttemptResult;
}

const inactive = (what: string) =>
  new DomainError('webhook_inactive', `The webhook is inactive; activate it before ${what}`);

/**
 * Runs the transaction that records a send's attempt and gives the caller's answer: `settle` writes the attempt
 * in the transaction `m` and returns what was sent. A procedure passes its write transaction here, so an
 * Idempotency-Key's answer is stored with the attempt's record (both commit, or neither).
 */
export type RecordSent<T, R> = (settle: (m: EntityManager) => Promise<T>) => Promise<R>;

/**
 * Sends `event` to `webhook` once, now: a new history row (leased by this call, one attempt, no automatic
 * retry), attempted through the real sender and recorded with its attempt (in `record`'s transaction).
 * `load` runs first in the transaction that writes the row (checks that refuse the send). An HTTP failure is
 * a result, not an error.
 */
async function sendOnceNow<R>(
  s: Services,
  load: (m: EntityManager) => Promise<{ webhook: Webhook; event: EventSnapshot; redeliveryOf?: string }>,
  record: RecordSent<SentNow, R>,
): Promise<R> {
  const deps = deliveryDepsFor(s);
  const owner = `redeliver:${randomUUID()}`;
  const { webhook, row } = await inTransaction(s, async (m) => {
    const { webhook, event, redeliveryOf } = await load(m);
    const now = deps.now();
    const row = newDeliveryRow(m, webhook.id, event, now, {
      maxAttempts: 1,
      redeliveryOf,
      lease: { owner, until: new Date(now.getTime() + REDELIVER_LEASE_MS) },
    });
    await insertDeliveryRows(m, [row]);
    return { webhook, row };
  });
  try {
    const attempt = await attemptDelivery(deps, row, webhook, s.log);
    const update = updateAfterAttempt(row, attempt, deps.now(), deps.backoffBaseMs);
    const books = { now: deps.now(), disableAfterMs: deps.disableAfterMs };
    return await record(async (m) => {
      await settleIn(
        m,
        owner,
        [{ id: row.id, update, made: { row, result: attempt, attemptNumber: update.attempts } }],
        books,
      );
      return { delivery: await readDelivery(m, row.id), attempt };
    });
  } catch (err) {
    await releaseLease(s, row.id, owner);
    throw err;
  }
}

/** Records in a transaction of its own (no Idempotency-Key to store with it). */
const ownTransaction =
  <T>(s: Services): RecordSent<T, T> =>
  (settle) =>
    inTransaction(s, settle);

/**
 * Sends the event of a history row once more, now: same event id, a new `deliveryId`,
 * a new history row (`redeliveryOf` the original), one attempt and no automatic retry. An HTTP failure is
 * a result (success=false), not an error. Preconditions: 404 `not_found` without the original delivery
 * (with a message naming the id the path takes when the `Svc-Webhook-Delivery` UUID is given instead),
 * 409 `webhook_inactive`, 422 `validation_error` when its stored payload cannot be interpreted.
 */
export async function redeliverWebhookDelivery(
  s: Services,
  actor: Actor | undefined,
  input: RedeliverInput,
): Promise<WebhookDelivery>;
export async function redeliverWebhookDelivery<R>(
  s: Services,
  actor: Actor | undefined,
  input: RedeliverInput,
  record: RecordSent<WebhookDelivery, R>,
): Promise<R>;
export async function redeliverWebhookDelivery<R>(
  s: Services,
  actor: Actor | undefined,
  input: RedeliverInput,
  record?: RecordSent<WebhookDelivery, R>,
): Promise<R | WebhookDelivery> {
  const answer: RecordSent<WebhookDelivery, R | WebhookDelivery> = record ?? ownTransaction(s);
  return sendOnceNow(
    s,
    async (m) => {
      const webhook = await loadWebhook(m, input.webhookId, actor, input.roomId);
      if (UUID.test(input.deliveryId)) {
        const byUuid = await findDeliveryByUuid(m, webhook.id, input.deliveryId.toLowerCase());
        throw new DomainError(
          'not_found',
          'Delivery not found: the deliveryId path parameter takes the history row id (whd_…, the "id" field of the delivery list), ' +
            'not the Svc-Webhook-Delivery UUID' +
            (byUuid ? `; this UUID belongs to the history row ${byUuid.id}` : ''),
          {
            details: {
              reason: 'delivery_uuid_given',
              expected: 'whd_ history row id',
              ...(byUuid ? { historyId: byUuid.id } : {}),
            },
          },
        );
      }
      const original = await findDelivery(m, webhook.id, input.deliveryId);
      if (!original) throw notFound('Delivery');
      if (!webhook.active) throw inactive('redelivering');
      const event = parseSnapshot(original.payload);
      if (!event) {
        throw new DomainError('validation_error', 'The stored payload of this delivery cannot be interpreted', {
          status: 422,
          details: { reason: 'payload_uninterpretable' },
        });
      }
      return { webhook, event, redeliveryOf: original.id };
    },
    (settle) => answer(async (m) => (await settle(m)).delivery),
  );
}

/** One delivery row of a webhook (its history id), or null; the caller has loaded the webhook with its access. */
export const findWebhookDelivery = (m: EntityManager, webhookId: string, id: string): Promise<WebhookDelivery | null> =>
  findDelivery(m, webhookId, id);

/** A test event's id: `evt_` and 22 characters, as every event id, never one of the event log. */
const testEventId = () => `evt_${randomBytes(16).toString('base64url')}`;

/**
 * Sends a test event to one webhook now, through the real sender: type `webhook.test` (outside
 * the catalog), `data.object` the webhook itself, marked by `Svc-Webhook-Test: true` and `"test": true`,
 * signed with the webhook's secret(s). A new history row, one attempt, its record kept like any other.
 * 404 without the webhook, 409 `webhook_inactive`.
 */
export async function sendTestEvent(
  s: Services,
  actor: Actor | undefined,
  input: { webhookId: string; roomId?: string },
): Promise<SentNow>;
export async function sendTestEvent<R>(
  s: Services,
  actor: Actor | undefined,
  input: { webhookId: string; roomId?: string },
  record: RecordSent<SentNow, R>,
): Promise<R>;
export async function sendTestEvent<R>(
  s: Services,
  actor: Actor | undefined,
  input: { webhookId: string; roomId?: string },
  record?: RecordSent<SentNow, R>,
): Promise<R | SentNow> {
  const answer: RecordSent<SentNow, R | SentNow> = record ?? ownTransaction(s);
  return sendOnceNow(
    s,
    async (m) => {
      const webhook = await loadWebhook(m, input.webhookId, actor, input.roomId);
      if (!webhook.active) throw inactive('sending a test event');
      const event: EventSnapshot = {
        id: testEventId(),
        type: TEST_EVENT_TYPE,
        createdAt: deliveryDepsFor(s).now().toISOString(),
        organizationId: webhook.organizationId,
        roomId: webhook.roomId,
        object: { type: 'webhook', id: webhook.id },
      };
      return { webhook, event };
    },
    answer,
  );
}
