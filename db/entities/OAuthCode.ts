import { Entity, Index } from 'typeorm';
import { IdColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * An authorization code: single use, 60 s, bound to the client, redirect_uri, PKCE challenge,
 * resource, user, acting organization and scopes. Only the SHA-256 of the code is stored.
 */
@Entity('oauth_codes')
export class OAuthCode {
  @IdColumn() id!: string;
  @TextColumn({ unique: true }) codeHash!: string;
  @RefColumn() clientId!: string;
  @RefColumn() userId!: string;
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @JsonColumn() scopes!: string[];
  @TextColumn() resource!: string;
  @TextColumn() redirectUri!: string;
  /** S256 challenge: base64url(SHA-256(code_verifier)). */
  @TextColumn() codeChallenge!: string;
  @TimeColumn() @Index() expiresAt!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn({ nullable: true }) usedAt!: string | null;
  /** The grant the exchange created: revoked when the code is presented again. */
  @RefColumn({ nullable: true }) grantId!: string | null;
}
