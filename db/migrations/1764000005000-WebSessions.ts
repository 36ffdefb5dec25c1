import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/** Server-side sessions of the pages: the cookie's token is stored only as its SHA-256. */
export class WebSessions1764000005000 implements MigrationInterface {
  name = 'WebSessions1764000005000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'web_sessions',
        [
          col.id(),
          col.text('tokenHash', { isUnique: true }),
          col.ref('userId'),
          col.time('createdAt'),
          col.time('lastSeenAt'),
          col.time('expiresAt'),
        ],
        [{ columns: ['userId'] }, { columns: ['expiresAt'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('web_sessions');
  }
}
