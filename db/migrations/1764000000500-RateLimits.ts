import type { MigrationInterface, QueryRunner } from 'typeorm';
import { table } from './tableBuilder.js';

/**
 * The table rate-limiter-flexible keeps its 60 s windows in (its own schema), created here rather than by
 * the library at run time, so that several processes starting at once never race to create it.
 */
export class RateLimits1764000000500 implements MigrationInterface {
  name = 'RateLimits1764000000500';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table('rate_limits', [
        { name: 'key', type: 'varchar', length: '255', isPrimary: true },
        { name: 'points', type: 'integer', default: 0 },
        { name: 'expire', type: 'bigint', isNullable: true },
      ]),
      true, // databases created before this migration already have the library's own table
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('rate_limits');
  }
}
