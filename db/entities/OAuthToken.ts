import { Entity, Index } from 'typeorm';
import { IdColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * An access (`svc_at_…`, 1 hour) or refresh (`svc_rt_…`, rotated on use) token of a grant. Only the SHA-256
 * of the token is stored. A refresh token with `usedAt` set was rotated: presenting it again
 * revokes the whole grant.
 */
@Entity('oauth_tokens')
export class OAuthToken {
  @IdColumn() id!: string;
  @RefColumn() @Index() grantId!: string;
  @TextColumn() kind!: 'access' | 'refresh';
  @TextColumn({ unique: true }) tokenHash!: string;
  @JsonColumn() scopes!: string[];
  @TimeColumn() createdAt!: string;
  @TimeColumn() expiresAt!: string;
  @TimeColumn({ nullable: true }) usedAt!: string | null;
  @TimeColumn({ nullable: true }) revokedAt!: string | null;
  /** A delegated token works in this room only; null: no room restriction. */
  @RefColumn({ nullable: true }) roomId!: string | null;
  /** The agent run a delegated token was minted for: it works only while the run is queued or running. */
  @RefColumn({ nullable: true }) agentRunId!: string | null;
}
