import { Entity, Index } from 'typeorm';
import { IdColumn, IntColumn, JsonColumn, TextColumn, TimeColumn } from './columns.js';

/** A remembered write, keyed by credential, method, path and Idempotency-Key; kept 24 hours. */
@Entity('idempotency_keys')
export class IdempotencyRecord {
  /** SHA-256 of credential id, method, path and key. */
  @IdColumn() id!: string;
  @TextColumn() fingerprint!: string;
  @TextColumn() state!: 'in_flight' | 'done';
  @IntColumn({ nullable: true }) statusCode!: number | null;
  @JsonColumn({ nullable: true }) response!: unknown;
  @TimeColumn() createdAt!: string;
  @TimeColumn() @Index() expiresAt!: string;
}
