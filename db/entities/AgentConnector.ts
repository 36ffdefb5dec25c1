import { Entity } from 'typeorm';
import { BoolColumn, IdColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * An agent connector: an endpoint an organization administrator registered, which the service
 * invokes to run an agent. `scopes` bound what any run's delegated token may carry; the signing secret is
 * kept encrypted (AES-256-GCM, like webhook secrets) because the sender needs it to sign.
 */
@Entity('agent_connectors')
export class AgentConnector {
  @IdColumn() id!: string;
  @RefColumn() organizationId!: string;
  @TextColumn() name!: string;
  @TextColumn() url!: string;
  @JsonColumn() scopes!: string[];
  @TextColumn() secretEnc!: string;
  @BoolColumn() active!: boolean;
  @RefColumn({ nullable: true }) createdById!: string | null;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
}
