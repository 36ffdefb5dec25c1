import { Entity, Index } from 'typeorm';
import { BoolColumn, IdColumn, IntColumn, JsonColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

export type AgentRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

/** What a run was asked to do: a text, optionally a record or a task of the room to work on. */
export interface AgentRunInput {
  text: string;
  recordId?: string | null;
  taskId?: string | null;
}

/**
 * One run of an agent through a connector. The row is also the outbox of its invocation:
 * written in the transaction of the request that created it, claimed by a worker with a lease (like a
 * webhook delivery), invoked at least once. `userId` is the delegating human; `scopes` the delegated
 * token's (the invoker's ∩ the connector's).
 */
@Entity('agent_runs')
@Index(['roomId', 'id'])
@Index(['status', 'nextAttemptAt'])
export class AgentRun {
  @IdColumn() id!: string;
  @RefColumn() @Index() connectorId!: string;
  @RefColumn() roomId!: string;
  @RefColumn() organizationId!: string;
  @RefColumn() userId!: string;
  /** The invoking credential's actor kind (`app` for an API key, `user` for a user's token). */
  @TextColumn() invokedBy!: string;
  @RefColumn({ nullable: true }) apiKeyId!: string | null;
  /** The invoking OAuth token (when not an API key). */
  @RefColumn({ nullable: true }) tokenId!: string | null;
  @JsonColumn() scopes!: string[];
  @JsonColumn() input!: AgentRunInput;
  @TextColumn() status!: AgentRunStatus;
  /** The connector accepted the invocation and will finish the run through complete_agent_run. */
  @BoolColumn() awaitingCompletion!: boolean;
  @IntColumn() attempts!: number;
  @IntColumn() maxAttempts!: number;
  /** When the worker next looks at it: the next invocation attempt, or the deadline while awaiting completion. */
  @TimeColumn() nextAttemptAt!: string;
  @TextColumn({ nullable: true }) leaseOwner!: string | null;
  @TimeColumn({ nullable: true }) leaseUntil!: string | null;
  /** A run not finished by then fails (`deadline_exceeded`); the delegated token expires then too. */
  @TimeColumn() deadlineAt!: string;
  @IntColumn({ nullable: true }) lastStatusCode!: number | null;
  @TextColumn({ nullable: true }) error!: string | null;
  /** The connector's `output` (JSON text), on success. */
  @TextColumn({ nullable: true }) output!: string | null;
  @TimeColumn() createdAt!: string;
  @TimeColumn({ nullable: true }) startedAt!: string | null;
  @TimeColumn({ nullable: true }) finishedAt!: string | null;
  @TimeColumn() updatedAt!: string;
}
