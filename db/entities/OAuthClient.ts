import { Entity } from 'typeorm';
import { IdColumn, JsonColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * An OAuth client, registered only by an administrator (`svc client create`). Confidential
 * clients keep only the SHA-256 of their secret; public clients have none.
 */
@Entity('oauth_clients')
export class OAuthClient {
  /** The `client_id`. */
  @IdColumn() id!: string;
  @TextColumn() name!: string;
  @TextColumn() type!: 'public' | 'confidential';
  /** `agent`: an LLM/MCP agent whose tokens act as actor=agent. */
  @TextColumn() kind!: 'app' | 'agent';
  /** Registered redirect URIs, matched exactly. */
  @JsonColumn() redirectUris!: string[];
  /** Scopes the client may ask for. */
  @JsonColumn() scopes!: string[];
  @TextColumn({ nullable: true }) secretHash!: string | null;
  @TimeColumn() createdAt!: string;
}
