import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Each single-column index replaced here, and the (column, id) index that now serves its lookups in id order. */
const REPLACED = [
  // GET /v1/rooms pages an organization's rooms by id: SQLite sorted every room of the organization for each
  // page ("USE TEMP B-TREE FOR ORDER BY")
  { table: 'rooms', column: 'organizationId' },
  // every event's transaction lists its room's active webhooks by id (the outbox rows, in order): a sorter each
  // time, even for a room with none
  { table: 'webhooks', column: 'roomId' },
];

/**
 * Indexes by (column, id) for the lookups that read rows of one organization or room in id order, in place
 * of the single-column indexes (each lookup those served, the composite serves).
 */
export class OrderedListIndexes1764000009000 implements MigrationInterface {
  name = 'OrderedListIndexes1764000009000';

  async up(q: QueryRunner): Promise<void> {
    for (const { table, column } of REPLACED) {
      await q.createIndex(table, new TableIndex({ name: `IDX_${table}_${column}_id`, columnNames: [column, 'id'] }));
      await q.dropIndex(table, `IDX_${table}_${column}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table, column } of REPLACED) {
      await q.createIndex(table, new TableIndex({ name: `IDX_${table}_${column}`, columnNames: [column] }));
      await q.dropIndex(table, `IDX_${table}_${column}_id`);
    }
  }
}
