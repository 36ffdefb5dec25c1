import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * An approved Client ID Metadata Document client (registration stays with
 * administrators): `pattern` is a client-id URL (matched exactly) or an https origin (every client-id URL
 * under it). `organizationId` null: approved server-wide by an operator (`svc client allow` without --org).
 */
@Entity('oauth_client_approvals')
export class OAuthClientApproval {
  @IdColumn() id!: string;
  @TextColumn() pattern!: string;
  @RefColumn({ nullable: true }) @Index() organizationId!: string | null;
  /** The administrator who approved it on the page; null for the operator command line. */
  @RefColumn({ nullable: true }) createdById!: string | null;
  @TimeColumn() createdAt!: string;
}
