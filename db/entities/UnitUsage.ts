import { Column, Entity } from 'typeorm';
import { BigIntColumn } from './columns.js';

/** API units used by one billing entity in one UTC month (`YYYY-MM`). */
@Entity('unit_usage')
export class UnitUsage {
  @Column({ type: 'varchar', length: 80, primary: true }) billingEntity!: string;
  @Column({ type: 'varchar', length: 7, primary: true }) period!: string;
  @BigIntColumn() used!: number;
}
