import { Entity, Index } from 'typeorm';
import { BoolColumn, IdColumn, IntColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** The two webhook contracts: v1 `2025-10-23` (existing) and v2 `2026-06-09` (default). */
export type WebhookApiVersion = '2025-10-23' | '2026-06-09';

/**
 * A webhook subscribed to one room. Secrets are kept encrypted (AES-256-GCM, never plaintext)
 * because the sender needs them to sign; custom header values are encrypted too, as they may carry a
 * receiver's credential. Rotating while `nextSecretEnc` and `rotationEndsAt` are set.
 */
@Entity('webhooks')
@Index(['roomId', 'id'])
export class Webhook {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @TextColumn() url!: string;
  @TextColumn() apiVersion!: WebhookApiVersion;
  @TextColumn() secretEnc!: string;
  @TextColumn({ nullable: true }) nextSecretEnc!: string | null;
  @TimeColumn({ nullable: true }) rotationEndsAt!: string | null;
  /** Names of the custom headers, in order (shown in lists; the values are only in `headersEnc`). */
  @JsonColumn() headerNames!: string[];
  /** Encrypted JSON `[[name, value], …]`, or null without custom headers. */
  @TextColumn({ nullable: true }) headersEnc!: string | null;
  @BoolColumn() active!: boolean;
  /** Start of the current streak of failed attempts (null after a success): a long streak disables the webhook. */
  @TimeColumn({ nullable: true }) failingSince!: string | null;
  /** Why the service set the webhook inactive by itself (null when active, or deactivated by hand). */
  @TextColumn({ nullable: true }) disabledReason!: string | null;
  @TimeColumn({ nullable: true }) disabledAt!: string | null;
  /** The stable event types delivered to it; null (or empty) means every stable type. */
  @JsonColumn({ nullable: true }) eventTypes!: string[] | null;
  /** At most this many delivery attempts per second (per worker process); null: unlimited. */
  @IntColumn({ nullable: true }) maxDeliveriesPerSecond!: number | null;
  @RefColumn({ nullable: true }) createdById!: string | null;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
}
