import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

@Entity('messages')
@Index(['roomId', 'id'])
export class Message {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @RefColumn() authorId!: string;
  /** Who posted it: `user`, `app` or `agent`; the author stays the responsible human. */
  @TextColumn() postedBy!: string;
  @TextColumn() body!: string;
  @TimeColumn() createdAt!: string;
  /** The agent run that posted it, else null. */
  @RefColumn({ nullable: true }) agentRunId!: string | null;
}
