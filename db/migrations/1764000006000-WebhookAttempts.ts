import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/**
 * Every delivery attempt on record (`webhook_attempts`, one row per automatic attempt, redelivery
 * or test, kept `SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS`), and the auto-disable of a webhook whose deliveries
 * have all failed for `SVC_WEBHOOK_DISABLE_AFTER_HOURS` (`failingSince`, `disabledReason`, `disabledAt`).
 */
export class WebhookAttempts1764000006000 implements MigrationInterface {
  name = 'WebhookAttempts1764000006000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'webhook_attempts',
        [
          col.id(),
          col.ref('deliveryRowId'),
          col.ref('webhookId'),
          col.text('deliveryId'),
          col.int('attemptNumber'),
          col.text('kind'),
          col.time('startedAt'),
          col.int('durationMs', { isNullable: true }),
          col.int('statusCode', { isNullable: true }),
          col.text('errorClass', { isNullable: true }),
          col.text('requestUrl'),
          col.text('requestHeaders', { isNullable: true }),
          col.text('requestBody', { isNullable: true }),
          col.text('responseHeaders', { isNullable: true }),
          col.text('responseBody', { isNullable: true }),
          col.time('createdAt'),
        ],
        [{ columns: ['deliveryRowId', 'id'] }, { columns: ['webhookId', 'id'] }, { columns: ['createdAt'] }],
      ),
    );
    await q.addColumns('webhooks', [
      new TableColumn(col.time('failingSince', true)),
      new TableColumn(col.text('disabledReason', { isNullable: true })),
      new TableColumn(col.time('disabledAt', true)),
    ]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('webhooks', 'disabledAt');
    await q.dropColumn('webhooks', 'disabledReason');
    await q.dropColumn('webhooks', 'failingSince');
    await q.dropTable('webhook_attempts');
  }
}
