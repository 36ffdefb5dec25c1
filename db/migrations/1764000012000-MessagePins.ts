import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/**
 * Pinned messages: at most one pin per message (`messageId` unique), listed per room in pin order
 * (`roomId`, `id`), and counted per room for its limit.
 */
export class MessagePins1764000012000 implements MigrationInterface {
  name = 'MessagePins1764000012000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'message_pins',
        [col.id(), col.ref('roomId'), col.ref('messageId'), col.ref('pinnedById'), col.time('createdAt')],
        [{ columns: ['messageId'], unique: true }, { columns: ['roomId', 'id'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('message_pins');
  }
}
