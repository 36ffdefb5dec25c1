import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/**
 * One row per open MCP subscription stream, renewed while it lives: the per-credential stream cap counts these,
 * so it holds across every process on the database. A process that dies leaves rows that expire on their own.
 */
export class McpStreamLeases1764000011000 implements MigrationInterface {
  name = 'McpStreamLeases1764000011000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'mcp_stream_leases',
        [col.id(), { name: 'credential', type: 'varchar', length: '128' }, col.time('expiresAt')],
        [{ columns: ['credential', 'expiresAt'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('mcp_stream_leases');
  }
}
