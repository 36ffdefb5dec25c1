import { Entity, Index } from 'typeorm';
import { IdColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** An API key. Only the SHA-256 of the token is stored. */
@Entity('api_keys')
export class ApiKey {
  @IdColumn() id!: string;
  @RefColumn() @Index() userId!: string;
  /** Installed for this organization; null for the user's personal scope. */
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @TextColumn() name!: string;
  @TextColumn() mode!: 'live' | 'test';
  @JsonColumn() scopes!: string[];
  @TextColumn({ unique: true }) tokenHash!: string;
  @TextColumn() prefix!: string;
  @TextColumn() last4!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn({ nullable: true }) revokedAt!: string | null;
  /** Last successful authentication, kept to the minute (written at most once a minute per key). */
  @TimeColumn({ nullable: true }) lastUsedAt!: string | null;
}
