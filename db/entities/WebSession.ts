import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/**
 * A signed-in browser session of the pages. The cookie holds a random token; only its
 * SHA-256 is stored. A session ends when it is idle too long (`lastSeenAt`), at `expiresAt` whatever its
 * use, or when its row is deleted (sign-out, sign out everywhere, a password change).
 */
@Entity('web_sessions')
export class WebSession {
  @IdColumn() id!: string;
  @TextColumn({ unique: true }) tokenHash!: string;
  @RefColumn() @Index() userId!: string;
  @TimeColumn() createdAt!: string;
  /** Last request seen with it, kept to the minute (written at most once a minute). */
  @TimeColumn() lastSeenAt!: string;
  /** Absolute end, however active the session is. */
  @TimeColumn() @Index() expiresAt!: string;
}
