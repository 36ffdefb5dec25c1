import type { EntityManager } from 'typeorm';
import type { WebhookDelivery } from '../../db/entities/index.js';
import { deliveryWithRedeliveries } from '../../db/stores/deliveries.js';

/**
 * A delivery of a room's webhook, by its history id (`whd_…`) or its `Svc-Webhook-Delivery` UUID, with how many
 * times it was redelivered so far: what a person confirms before redelivering it. Null when there is none; the
 * caller checks the room's access first.
 */
export const findDeliveryWithRedeliveries = (
  m: EntityManager,
  roomId: string,
  webhookId: string,
  deliveryId: string,
): Promise<{ delivery: WebhookDelivery; redeliveries: number } | null> =>
  deliveryWithRedeliveries(m, roomId, webhookId, deliveryId);
