import { Entity, Index } from 'typeorm';
import { IdColumn, IntColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** One row per /v1 request and MCP tool call. Never holds a secret. */
@Entity('audit_log')
@Index(['createdAt'])
@Index(['userId', 'createdAt'])
export class AuditEntry {
  @IdColumn() id!: string;
  @TextColumn() requestId!: string;
  @TextColumn() surface!: 'rest' | 'mcp';
  @TextColumn() method!: string;
  @TextColumn() routePattern!: string;
  @IntColumn() statusCode!: number;
  @TextColumn({ nullable: true }) authMethod!: 'api_key' | 'oauth_bearer' | null;
  @TextColumn({ nullable: true }) actor!: 'user' | 'app' | 'agent' | null;
  @RefColumn({ nullable: true }) delegatingUserId!: string | null;
  @JsonColumn() scopes!: string[];
  @RefColumn({ nullable: true }) organizationId!: string | null;
  @RefColumn({ nullable: true }) userId!: string | null;
  @RefColumn({ nullable: true }) apiKeyId!: string | null;
  @RefColumn({ nullable: true }) tokenId!: string | null;
  @IntColumn() units!: number;
  @TextColumn({ nullable: true }) errorCode!: string | null;
  @TimeColumn() createdAt!: string;
  /** The agent run the request acted for (a delegated token), else null. */
  @RefColumn({ nullable: true }) agentRunId!: string | null;
}
