import { Entity, Index } from 'typeorm';
import { IdColumn, IntColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

@Entity('rooms')
@Index(['organizationId', 'id'])
export class Room {
  @IdColumn() id!: string;
  @TextColumn() name!: string;
  /** 0 ordinary, 1 direct message (never reachable through the public API). */
  @IntColumn() roomType!: number;
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @RefColumn() createdById!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
}

@Entity('room_members')
@Index(['roomId', 'userId'], { unique: true })
export class RoomMember {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @RefColumn() @Index() userId!: string;
  @TimeColumn() createdAt!: string;
}
