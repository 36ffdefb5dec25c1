import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

export type TaskStatus = 'todo' | 'in_progress' | 'done';

@Entity('tasks')
@Index(['roomId', 'id'])
export class Task {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @TextColumn() title!: string;
  @TextColumn({ default: '' }) description!: string;
  @TextColumn() status!: TaskStatus;
  @RefColumn({ nullable: true }) assigneeId!: string | null;
  /** Calendar dates `YYYY-MM-DD`. */
  @TextColumn({ nullable: true }) startDate!: string | null;
  @TextColumn({ nullable: true }) dueDate!: string | null;
  @RefColumn() createdById!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
  /** The agent run that created it, else null. */
  @RefColumn({ nullable: true }) agentRunId!: string | null;
}
