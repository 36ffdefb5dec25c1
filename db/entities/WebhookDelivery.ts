import { Entity, Index } from 'typeorm';
import { IdColumn, IntColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed';

/**
 * One delivery job of one event to one webhook: the outbox row written in the event's transaction, the
 * worker's lease, and the row of the public delivery history (`id` is the history id, `deliveryId` the
 * `Svc-Webhook-Delivery` UUID, equal across automatic retries). A redelivery is a new row.
 */
@Entity('webhook_deliveries')
@Index(['state', 'nextAttemptAt'])
@Index(['webhookId', 'id'])
@Index(['webhookId', 'eventId'])
export class WebhookDelivery {
  @IdColumn() id!: string;
  @RefColumn() webhookId!: string;
  @RefColumn() roomId!: string;
  @TextColumn() eventId!: string;
  @TextColumn() eventType!: string;
  @TextColumn({ unique: true }) deliveryId!: string;
  /** JSON snapshot of the event (what the v1 and v2 bodies are built from). */
  @TextColumn() payload!: string;
  @TextColumn() state!: WebhookDeliveryState;
  @IntColumn() attempts!: number;
  @IntColumn() maxAttempts!: number;
  @TimeColumn() nextAttemptAt!: string;
  @TextColumn({ nullable: true }) leaseOwner!: string | null;
  @TimeColumn({ nullable: true }) leaseUntil!: string | null;
  /** HTTP status of the last attempt; null when no response came (timeout, network, refused URL). */
  @IntColumn({ nullable: true }) statusCode!: number | null;
  @IntColumn({ nullable: true }) durationMs!: number | null;
  /** First 2 KB of the receiver's last response: for operators only, never returned by the API. */
  @TextColumn({ nullable: true }) responseBody!: string | null;
  /** Why the last attempt failed without a usable status (`timeout`, `network_error`, `ssrf_blocked`, …). */
  @TextColumn({ nullable: true }) lastError!: string | null;
  @TimeColumn({ nullable: true }) finalizedAt!: string | null;
  /** The history row this one redelivers. */
  @RefColumn({ nullable: true }) redeliveryOf!: string | null;
  @TimeColumn() createdAt!: string;
}
