import { Entity } from 'typeorm';
import { Column } from 'typeorm';
import { TextColumn } from './columns.js';

/** Server-wide values shared by every process on the database (e.g. the generated server secret). */
@Entity('settings')
export class Setting {
  @Column({ type: 'varchar', length: 64, primary: true }) key!: string;
  @TextColumn() value!: string;
}
