import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `GET /v1/rooms` pages an organization's rooms in id order: index them by (organizationId, id), so a page
 * reads its rows in order instead of sorting every room of the organization for each page (SQLite's plan
 * was "USE TEMP B-TREE FOR ORDER BY"). The composite index serves every lookup the single-column one served.
 */
export class RoomsOrganizationIdIndex1764000009000 implements MigrationInterface {
  name = 'RoomsOrganizationIdIndex1764000009000';

  async up(q: QueryRunner): Promise<void> {
    await q.createIndex('rooms', new TableIndex({ name: 'IDX_rooms_organizationId_id', columnNames: ['organizationId', 'id'] }));
    await q.dropIndex('rooms', 'IDX_rooms_organizationId');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.createIndex('rooms', new TableIndex({ name: 'IDX_rooms_organizationId', columnNames: ['organizationId'] }));
    await q.dropIndex('rooms', 'IDX_rooms_organizationId_id');
  }
}
