import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** The event log: one row per domain event, written in the transaction of the change (the outbox). */
@Entity('events')
@Index(['organizationId', 'id'])
export class EventRow {
  /** Internal, time-ordered key used for paging. */
  @IdColumn() seq!: string;
  /** Public `evt_` id: 16 random bytes, base64url. */
  @TextColumn({ unique: true }) id!: string;
  @TextColumn() type!: string;
  @RefColumn({ nullable: true }) organizationId!: string | null;
  /** Owner of a personal-scope room, so that personal events are visible to it alone. */
  @RefColumn({ nullable: true }) ownerUserId!: string | null;
  @RefColumn() roomId!: string;
  @TextColumn() objectType!: string;
  @RefColumn() objectId!: string;
  @TextColumn() actor!: string;
  @RefColumn() userId!: string;
  @TimeColumn() createdAt!: string;
}
