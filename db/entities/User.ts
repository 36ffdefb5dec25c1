import { Entity } from 'typeorm';
import { IdColumn, TextColumn, TimeColumn } from './columns.js';

@Entity('users')
export class User {
  @IdColumn() id!: string;
  @TextColumn({ unique: true }) email!: string;
  @TextColumn() name!: string;
  /** scrypt hash: `scrypt$N$r$p$salt$hash` (base64url parts). */
  @TextColumn() passwordHash!: string;
  @TextColumn() locale!: string;
  @TimeColumn() createdAt!: string;
  @TimeColumn() updatedAt!: string;
}
