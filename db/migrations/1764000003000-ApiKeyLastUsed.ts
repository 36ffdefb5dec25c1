import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { col } from './tableBuilder.js';

/**
 * `api_keys.lastUsedAt` (the developer settings list shows when a key was last used). Nullable:
 * keys issued before this migration, and keys never used, have none. Written by authentication at most
 * once a minute per key.
 */
export class ApiKeyLastUsed1764000003000 implements MigrationInterface {
  name = 'ApiKeyLastUsed1764000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn('api_keys', new TableColumn(col.time('lastUsedAt', true)));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('api_keys', 'lastUsedAt');
  }
}
