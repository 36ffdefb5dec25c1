import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

export type ApprovalState = 'none' | 'pending' | 'approved' | 'rejected' | 'withdrawn';

/** Meeting minutes. */
@Entity('records')
@Index(['roomId', 'id'])
export class MeetingRecord {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @TextColumn() title!: string;
  @TextColumn({ default: '' }) body!: string;
  @TextColumn() approvalState!: ApprovalState;
  @RefColumn() createdById!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'withdrawn';

@Entity('approvals')
@Index(['recordId', 'id'])
export class Approval {
  @IdColumn() id!: string;
  @RefColumn() recordId!: string;
  @RefColumn() roomId!: string;
  @TextColumn() status!: ApprovalStatus;
  @RefColumn() requestedById!: string;
  @RefColumn({ nullable: true }) decidedById!: string | null;
  @TextColumn({ nullable: true }) comment!: string | null;
  @TimeColumn() createdAt!: string;
  @TimeColumn({ nullable: true }) decidedAt!: string | null;
}
