import { parseHeaderLine } from '../../webhooks/customHeaders.js';
import { serveMetrics } from '../../observability/serveMetrics.js';
import { purgeWebhookAttempts } from '../../webhooks/attemptLog.js';
import { createAgentRunWorker } from '../../agents/runWorker.js';
import { createWebhookWorker } from '../../webhooks/deliveryWorker.js';
import { sendTestEvent } from '../../webhooks/redeliver.js';
import { completeWebhookRotation, rotateWebhookSecret } from '../../webhooks/rotation.js';
import { createWebhook, deleteWebhook, setWebhookActive } from '../../webhooks/webhookConfig.js';
import { API_VERSIONS } from '../../webhooks/constants.js';
import type { Services } from '../../domain/services.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

const idOnly = { id: { type: 'string' as const, description: 'the webhook, as webhook create printed its id' } };

/** A command that takes only `--id WH`, does one thing to that webhook and prints `{}`. */
const byId = (name: string, summary: string, act: (s: Services, id: string) => Promise<unknown>): Command => ({
  name,
  usage: `svc ${name} --id WH`,
  summary,
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
    summary: "create a webhook for a room's events (its signing secret is printed once)",
    options: {
      room: { type: 'string', description: 'the room whose events it receives (room_…)' },
      url: { type: 'string', description: 'the URL each delivery is POSTed to' },
      'api-version': { type: 'string', description: `the payload format: ${API_VERSIONS.join(' or ')} (default ${API_VERSIONS[0]})` },
      header: { type: 'string', multiple: true, description: 'a custom header sent with every delivery, "Name: value"; repeat for more' },
      'created-by': { type: 'string', description: 'the user recorded as its creator (usr_…)' },
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
    summary: "start rotating a webhook's signing secret: both secrets sign until the rotation ends",
    options: { ...idOnly, 'period-days': { type: 'string', description: 'days until the old secret stops signing, 1-90 (default 7)' } },
    async run(a, { services: s }) {
      const raw = optional(a, 'period-days');
      if (raw !== undefined && !/^\d+$/.test(raw)) throw new UsageError('--period-days must be a whole number of days (1-90)');
      return rotateWebhookSecret(s, required(a, 'id'), { periodDays: raw === undefined ? undefined : Number(raw) });
    },
  },
  byId('webhook complete-rotation', 'end a rotation now: only the new secret signs', (s, id) => completeWebhookRotation(s, id)),
  byId('webhook deactivate', 'stop delivering to a webhook', (s, id) => setWebhookActive(s, id, false)),
  byId('webhook activate', 'deliver to a deactivated webhook again', (s, id) => setWebhookActive(s, id, true)),
  byId('webhook delete', 'delete a webhook', (s, id) => deleteWebhook(s, id)),
  {
    name: 'webhook test',
    usage: 'svc webhook test --id WH   (sends a signed webhook.test event now and prints the outcome)',
    summary: 'send a signed webhook.test event now and print the outcome',
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
    summary: 'delete old records of delivery attempts',
    options: { before: { type: 'string', description: 'delete records older than this time (ISO 8601)' } },
    async run(a, { services: s }) {
      const raw = optional(a, 'before');
      const before = raw === undefined ? undefined : new Date(raw);
      if (before && Number.isNaN(before.getTime())) throw new UsageError('--before must be an ISO 8601 time');
      return { deleted: await purgeWebhookAttempts(s, before) };
    },
  },
  {
    name: 'worker',
    usage: 'svc worker   (runs the webhook delivery and agent run workers alone until SIGTERM/SIGINT)',
    summary: 'run the webhook delivery and agent run workers alone, until SIGTERM or SIGINT',
    options: {},
    async run(_a, { services: s }) {
      const stopTracing = s.config.tracing ? await (await import('../../observability/startTracing.js')).startTracing() : null;
      const metricsServer = await serveMetrics(s);
      const worker = createWebhookWorker({ services: s });
      worker.start();
      // agent run invocations (issue 21) go through the same kind of outbox, so the same process runs them
      const runWorker = createAgentRunWorker({ services: s });
      runWorker.start();
      process.stderr.write(`webhook worker ${worker.owner} running; SIGTERM or SIGINT stops it\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      await Promise.all([worker.stop(), runWorker.stop()]);
      metricsServer?.closeAllConnections();
      await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
      await stopTracing?.().catch(() => undefined);
      return {};
    },
  },
];
