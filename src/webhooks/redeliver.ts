import { randomUUID } from 'node:crypto';
import { WebhookDelivery } from '../../db/entities/index.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, notFound } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { inTransaction } from '../procedures/tx.js';
import { attemptDelivery, updateAfterAttempt } from './attemptDelivery.js';
import { deliveryDepsFor } from './deliveryDeps.js';
import { finishAttempt, newDeliveryRow, releaseLease } from './deliveryStore.js';
import { parseSnapshot } from './payload.js';
import { loadWebhook } from './webhookConfig.js';

/** How long the synchronous redelivery holds its row before a worker may take it over (after a crash). */
const REDELIVER_LEASE_MS = 120_000;

export interface RedeliverInput {
  roomId: string;
  webhookId: string;
  /** The history row `id` of the delivery to send again (spec 4 rule 1). */
  deliveryId: string;
}

/**
 * Spec 4 rules 1-2: sends the event of a history row once more, now: same event id, a new `deliveryId`,
 * a new history row (`redeliveryOf` the original), one attempt and no automatic retry. An HTTP failure is
 * a result (success=false), not an error. Preconditions: 404 `not_found` without the original delivery,
 * 409 `webhook_inactive`, 422 `validation_error` when its stored payload cannot be interpreted.
 */
export async function redeliverWebhookDelivery(s: Services, actor: Actor | undefined, input: RedeliverInput): Promise<WebhookDelivery> {
  const deps = deliveryDepsFor(s);
  const owner = `redeliver:${randomUUID()}`;
  const { webhook, row } = await inTransaction(s, async (m) => {
    const webhook = await loadWebhook(m, input.webhookId, actor, input.roomId);
    const original = await m.findOneBy(WebhookDelivery, { id: input.deliveryId, webhookId: webhook.id });
    if (!original) throw notFound('Delivery');
    if (!webhook.active) throw new DomainError('webhook_inactive', 'The webhook is inactive; activate it before redelivering');
    const event = parseSnapshot(original.payload);
    if (!event) {
      throw new DomainError('validation_error', 'The stored payload of this delivery cannot be interpreted', {
        status: 422, details: { reason: 'payload_uninterpretable' },
      });
    }
    const now = deps.now();
    const row = newDeliveryRow(m, webhook.id, event, now, {
      maxAttempts: 1, redeliveryOf: original.id, lease: { owner, until: new Date(now.getTime() + REDELIVER_LEASE_MS) },
    });
    await m.insert(WebhookDelivery, row);
    return { webhook, row };
  });
  try {
    const r = await attemptDelivery(deps, row, webhook, s.log);
    await finishAttempt(s, row.id, owner, updateAfterAttempt(row, r, deps.now(), deps.backoffBaseMs));
  } catch (err) {
    await releaseLease(s, row.id, owner);
    throw err;
  }
  return s.ds.getRepository(WebhookDelivery).findOneByOrFail({ id: row.id });
}
