import type { EntityManager } from 'typeorm';
import { WebhookDelivery } from '../../db/entities/index.js';

/**
 * A delivery of a room's webhook, by its history id (`whd_…`) or its `Svc-Webhook-Delivery` UUID, with how many
 * times it was redelivered so far: what a person confirms before redelivering it. Null when there is none; the
 * caller checks the room's access first.
 */
export async function findDeliveryWithRedeliveries(
  m: EntityManager,
  roomId: string,
  webhookId: string,
  deliveryId: string,
): Promise<{ delivery: WebhookDelivery; redeliveries: number } | null> {
  const delivery = await m.findOne(WebhookDelivery, {
    where: [
      { id: deliveryId, webhookId, roomId },
      { deliveryId, webhookId, roomId },
    ],
  });
  if (!delivery) return null;
  return { delivery, redeliveries: await m.countBy(WebhookDelivery, { redeliveryOf: delivery.id }) };
}
