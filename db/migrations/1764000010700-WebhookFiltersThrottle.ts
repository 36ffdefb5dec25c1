import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { col } from './tableBuilder.js';

const INDEX = 'IDX_webhook_deliveries_webhookId_eventId';

/**
 * Event-type filters and a per-webhook throttle: `eventTypes` (JSON array of stable types; null for every
 * type, which is what existing webhooks get) and `maxDeliveriesPerSecond` (null: unlimited, as today). An
 * index on deliveries by webhook and event serves `recover` (is an event's latest delivery failed?).
 */
export class WebhookFiltersThrottle1764000010700 implements MigrationInterface {
  name = 'WebhookFiltersThrottle1764000010700';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('webhooks', [
      new TableColumn(col.text('eventTypes', { isNullable: true })),
      new TableColumn(col.int('maxDeliveriesPerSecond', { isNullable: true })),
    ]);
    await q.createIndex('webhook_deliveries', new TableIndex({ name: INDEX, columnNames: ['webhookId', 'eventId'] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('webhook_deliveries', INDEX);
    await q.dropColumn('webhooks', 'maxDeliveriesPerSecond');
    await q.dropColumn('webhooks', 'eventTypes');
  }
}
