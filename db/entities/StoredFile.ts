import { Entity, Index } from 'typeorm';
import { BigIntColumn, IdColumn, RefColumn, TextColumn, TimeColumn } from './columns.js';

/** File metadata; the bytes live on disk under `<dataDir>/files/<storageKey>`. */
@Entity('files')
@Index(['roomId', 'id'])
export class StoredFile {
  @IdColumn() id!: string;
  @RefColumn() roomId!: string;
  @RefColumn({ nullable: true }) messageId!: string | null;
  @RefColumn({ nullable: true }) taskId!: string | null;
  @TextColumn() filename!: string;
  @TextColumn() contentType!: string;
  @BigIntColumn() size!: number;
  @TextColumn() sha256!: string;
  @TextColumn() storageKey!: string;
  @RefColumn() uploadedById!: string;
  @TimeColumn() createdAt!: string;
}
