import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

@Entity('organizations')
export class Organization {
  @IdColumn() id!: string;
  @TextColumn() name!: string;
  /** Plan name; its limits come from configuration (`Config.plans`). */
  @TextColumn({ default: 'default' }) plan!: string;
  @TimeColumn() createdAt!: string;
}

export type OrgRole = 'owner' | 'admin' | 'member';

@Entity('memberships')
@Index(['organizationId', 'userId'], { unique: true })
export class Membership {
  @IdColumn() id!: string;
  @RefColumn() organizationId!: string;
  @RefColumn() @Index() userId!: string;
  @TextColumn() role!: OrgRole;
  @TimeColumn() createdAt!: string;
}
