import { Entity, Index } from 'typeorm';
import { IdColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * One consent turned into tokens: the refresh-token family. Created when a code is exchanged;
 * revoking it revokes every token issued under it. Its acting context (`organizationId`, null for the
 * personal scope) was chosen by the user on the consent screen.
 */
@Entity('oauth_grants')
export class OAuthGrant {
  @IdColumn() id!: string;
  @RefColumn() @Index() clientId!: string;
  @RefColumn() @Index() userId!: string;
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @JsonColumn() scopes!: string[];
  /** The audience: `BASE_URL/v1` or `BASE_URL/mcp`. */
  @TextColumn() resource!: string;
  /** The family's start. */
  @TimeColumn() createdAt!: string;
  /** Family start + 30 days: no refresh token of the family outlives it. */
  @TimeColumn() expiresAt!: string;
  @TimeColumn({ nullable: true }) revokedAt!: string | null;
}
