import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { col } from './tableBuilder.js';

const BY_USER = 'IDX_mcp_stream_leases_userId_expiresAt';
const BY_ORGANIZATION = 'IDX_mcp_stream_leases_organizationId_expiresAt';

/**
 * Whose stream a lease is: the person and the organization besides the credential, so that the stream caps per
 * person and per organization count every process's streams too. Null on leases taken before (they expire within
 * seconds).
 */
export class McpStreamLeaseOwners1764000011500 implements MigrationInterface {
  name = 'McpStreamLeaseOwners1764000011500';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('mcp_stream_leases', [
      new TableColumn(col.ref('userId', true)),
      new TableColumn(col.ref('organizationId', true)),
    ]);
    await q.createIndex('mcp_stream_leases', new TableIndex({ name: BY_USER, columnNames: ['userId', 'expiresAt'] }));
    await q.createIndex(
      'mcp_stream_leases',
      new TableIndex({ name: BY_ORGANIZATION, columnNames: ['organizationId', 'expiresAt'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('mcp_stream_leases', BY_ORGANIZATION);
    await q.dropIndex('mcp_stream_leases', BY_USER);
    await q.dropColumn('mcp_stream_leases', 'organizationId');
    await q.dropColumn('mcp_stream_leases', 'userId');
  }
}
