import { Entity, Index } from 'typeorm';
import { IdColumn, IntColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** What made an attempt: the worker (first try and retries), a redelivery, or a test event. */
export type WebhookAttemptKind = 'automatic' | 'redelivery' | 'test';

/**
 * One attempt of one delivery: when, how long, the receiver's status or an error class, the
 * request exactly as sent (custom header values hidden: they may be a receiver's credentials) and the first
 * 2 KB of the response. For the owner's page and operators only, never in the public delivery history. Kept
 * `SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS` (default 30).
 */
@Entity('webhook_attempts')
@Index(['deliveryRowId', 'id'])
@Index(['webhookId', 'id'])
@Index(['createdAt'])
export class WebhookAttempt {
  @IdColumn() id!: string;
  /** The history row (`whd_…`) the attempt belongs to. */
  @RefColumn() deliveryRowId!: string;
  @RefColumn() webhookId!: string;
  /** `Svc-Webhook-Delivery` of the attempt. */
  @TextColumn() deliveryId!: string;
  /** 1 for the first attempt of the row. */
  @IntColumn() attemptNumber!: number;
  @TextColumn() kind!: WebhookAttemptKind;
  @TimeColumn() startedAt!: string;
  @IntColumn({ nullable: true }) durationMs!: number | null;
  @IntColumn({ nullable: true }) statusCode!: number | null;
  /**
   * `timeout`, `connection_refused`, `connection_reset`, `dns`, `tls`, `ssrf_refused`, `redirect_not_followed`,
   * `http_error`, …
   */
  @TextColumn({ nullable: true }) errorClass!: string | null;
  @TextColumn() requestUrl!: string;
  /** JSON object of the headers sent; null when nothing was sent (refused URL, inactive webhook). */
  @TextColumn({ nullable: true }) requestHeaders!: string | null;
  @TextColumn({ nullable: true }) requestBody!: string | null;
  /** JSON object of the receiver's response headers. */
  @TextColumn({ nullable: true }) responseHeaders!: string | null;
  /** First 2 KB of the receiver's response. */
  @TextColumn({ nullable: true }) responseBody!: string | null;
  @TimeColumn() createdAt!: string;
}
