import { parseHeaderLine } from '../../webhooks/customHeaders.js';
import { serveMetrics } from '../../observability/serveMetrics.js';
import { purgeWebhookAttempts } from '../../webhooks/attemptLog.js';
import { createWebhookWorker } from '../../webhooks/deliveryWorker.js';
import { sendTestEvent } from '../../webhooks/redeliver.js';
import { completeWebhookRotation, rotateWebhookSecret } from '../../webhooks/rotation.js';
import { createWebhook, deleteWebhook, setWebhookActive } from '../../webhooks/webhookConfig.js';
import { API_VERSIONS } from '../../webhooks/constants.js';
import type { Services } from '../../domain/services.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

const idOnly = { id: { type: 'string' as const } };

/** A command that takes only `--id WH`, does one thing to that webhook and prints `{}`. */
const byId = (name: string, act: (s: Services, id: string) => Promise<unknown>): Command => ({
  name,
  usage: `svc ${name} --id WH`,
  options: idOnly,
  async run(a, { services: s }) {
    await act(s, required(a, 'id'));
    return {};
  },
});

/** Webhook configuration (CONTRACT §2) and the standalone delivery worker. */
export const webhookCommands: Command[] = [
  {
    name: 'webhook create',
    usage: 'svc webhook create --room ROOM --url URL [--api-version 2026-06-09|2025-10-23] [--header "Name: value"]... [--created-by USR]',
    options: {
      room: { type: 'string' }, url: { type: 'string' }, 'api-version': { type: 'string' },
      header: { type: 'string', multiple: true }, 'created-by': { type: 'string' },
    },
    async run(a, { services: s }) {
      const apiVersion = oneOf(optional(a, 'api-version'), API_VERSIONS, 'api-version');
      const headers = ((a.header as string[] | undefined) ?? []).map(parseHeaderLine);
      const { webhook, secret } = await createWebhook(s, {
        roomId: required(a, 'room'), url: required(a, 'url'), apiVersion, headers, createdById: optional(a, 'created-by') ?? null,
      });
      return { id: webhook.id, secret };
    },
  },
  {
    name: 'webhook rotate',
    usage: 'svc webhook rotate --id WH [--period-days D]   (D: 1-90, default 7)',
    options: { ...idOnly, 'period-days': { type: 'string' } },
    async run(a, { services: s }) {
      const raw = optional(a, 'period-days');
      if (raw !== undefined && !/^\d+$/.test(raw)) throw new UsageError('--period-days must be a whole number of days (1-90)');
      return rotateWebhookSecret(s, required(a, 'id'), { periodDays: raw === undefined ? undefined : Number(raw) });
    },
  },
  byId('webhook complete-rotation', (s, id) => completeWebhookRotation(s, id)),
  byId('webhook deactivate', (s, id) => setWebhookActive(s, id, false)),
  byId('webhook activate', (s, id) => setWebhookActive(s, id, true)),
  byId('webhook delete', (s, id) => deleteWebhook(s, id)),
  {
    name: 'webhook test',
    usage: 'svc webhook test --id WH   (sends a signed webhook.test event now and prints the outcome)',
    options: idOnly,
    async run(a, { services: s }) {
      const { delivery: d, attempt } = await sendTestEvent(s, undefined, { webhookId: required(a, 'id') });
      return {
        id: d.id, deliveryId: d.deliveryId, eventId: d.eventId, eventType: d.eventType, success: d.state === 'succeeded',
        statusCode: attempt.statusCode, durationMs: attempt.durationMs, errorClass: attempt.record?.errorClass ?? null,
      };
    },
  },
  {
    name: 'webhook purge-attempts',
    usage: 'svc webhook purge-attempts [--before ISO]   (default: records older than SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS, 30)',
    options: { before: { type: 'string' } },
    async run(a, { services: s }) {
      const raw = optional(a, 'before');
      const before = raw === undefined ? undefined : new Date(raw);
      if (before && Number.isNaN(before.getTime())) throw new UsageError('--before must be an ISO 8601 time');
      return { deleted: await purgeWebhookAttempts(s, before) };
    },
  },
  {
    name: 'worker',
    usage: 'svc worker   (runs the webhook delivery worker alone until SIGTERM/SIGINT)',
    options: {},
    async run(_a, { services: s }) {
      const stopTracing = s.config.tracing ? await (await import('../../observability/startTracing.js')).startTracing() : null;
      const metricsServer = await serveMetrics(s);
      const worker = createWebhookWorker({ services: s });
      worker.start();
      process.stderr.write(`webhook worker ${worker.owner} running; SIGTERM or SIGINT stops it\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      await worker.stop();
      metricsServer?.closeAllConnections();
      await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
      await stopTracing?.().catch(() => undefined);
      return {};
    },
  },
];
