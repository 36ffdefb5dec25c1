import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/** Webhook configurations and their delivery outbox / history. */
export class Webhooks1764000002000 implements MigrationInterface {
  name = 'Webhooks1764000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'webhooks',
        [
          col.id(),
          col.ref('roomId'),
          col.ref('organizationId', true),
          col.text('url'),
          col.text('apiVersion'),
          col.text('secretEnc'),
          col.text('nextSecretEnc', { isNullable: true }),
          col.time('rotationEndsAt', true),
          col.text('headerNames'),
          col.text('headersEnc', { isNullable: true }),
          col.bool('active'),
          col.ref('createdById', true),
          col.time('createdAt'),
          col.time('updatedAt'),
        ],
        [{ columns: ['roomId'] }],
      ),
    );
    await q.createTable(
      table(
        'webhook_deliveries',
        [
          col.id(),
          col.ref('webhookId'),
          col.ref('roomId'),
          col.text('eventId'),
          col.text('eventType'),
          col.text('deliveryId', { isUnique: true }),
          col.text('payload'),
          col.text('state'),
          col.int('attempts'),
          col.int('maxAttempts'),
          col.time('nextAttemptAt'),
          col.text('leaseOwner', { isNullable: true }),
          col.time('leaseUntil', true),
          col.int('statusCode', { isNullable: true }),
          col.int('durationMs', { isNullable: true }),
          col.text('responseBody', { isNullable: true }),
          col.text('lastError', { isNullable: true }),
          col.time('finalizedAt', true),
          col.ref('redeliveryOf', true),
          col.time('createdAt'),
        ],
        [{ columns: ['state', 'nextAttemptAt'] }, { columns: ['webhookId', 'id'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('webhook_deliveries');
    await q.dropTable('webhooks');
  }
}
