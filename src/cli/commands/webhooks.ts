import type { Services } from '../../domain/services.js';
import { API_VERSIONS, MAX_DELIVERIES_PER_SECOND } from '../../webhooks/constants.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

// The webhook modules are loaded when a command runs, never at start (`svc help` loads none of them).
const config = () => import('../../webhooks/webhookConfig.js');
const signing = () => import('../../webhooks/signing.js');

const idOnly = { id: { type: 'string' as const, description: 'the webhook, as webhook create printed its id' } };

/** The filter and throttle options of `create` and `update`. */
const subscriptionOptions = {
  events: {
    type: 'string' as const,
    description:
      'comma-separated stable event types delivered to the webhook (e.g. task.created,record.updated); "all" or empty: every type',
  },
  'max-per-second': {
    type: 'string' as const,
    description: `at most this many deliveries per second to the webhook (1-${MAX_DELIVERIES_PER_SECOND}); "unlimited" removes the limit`,
  },
};

/** `--events`: undefined when not given; [] for "all" or an empty value (every stable type). */
function eventsOption(a: Record<string, unknown>): string[] | undefined {
  const raw = a.events;
  if (typeof raw !== 'string') return undefined;
  if (raw.trim() === '' || raw.trim() === 'all') return [];
  return raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * `--max-per-second`: undefined when not given, null for "unlimited", else a whole number (range checked by the
 * domain).
 */
function throttleOption(a: Record<string, unknown>): number | null | undefined {
  const raw = optional(a, 'max-per-second');
  if (raw === undefined) return undefined;
  if (raw === 'unlimited') return null;
  if (!/^\d{1,9}$/.test(raw))
    throw new UsageError(`--max-per-second must be a whole number (1-${MAX_DELIVERIES_PER_SECOND}) or "unlimited"`);
  return Number(raw);
}

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

/** Webhook configuration and the standalone delivery worker. */
export const webhookCommands: Command[] = [
  {
    name: 'webhook create',
    usage:
      'svc webhook create --room ROOM --url URL [--api-version 2026-06-09|2025-10-23] [--header "Name: value"]... [--created-by USR] [--events a.b,c.d] [--max-per-second N]',
    summary: "create a webhook for a room's events (its signing secret is printed once)",
    options: {
      room: { type: 'string', description: 'the room whose events it receives (room_…)' },
      url: { type: 'string', description: 'the URL each delivery is POSTed to' },
      'api-version': {
        type: 'string',
        description: `the payload format: ${API_VERSIONS.join(' or ')} (default ${API_VERSIONS[0]})`,
      },
      header: {
        type: 'string',
        multiple: true,
        description: 'a custom header sent with every delivery, "Name: value"; repeat for more',
      },
      'created-by': { type: 'string', description: 'the user recorded as its creator (usr_…)' },
      ...subscriptionOptions,
    },
    async run(a, { services: s }) {
      const apiVersion = oneOf(optional(a, 'api-version'), API_VERSIONS, 'api-version');
      const { parseHeaderLine } = await import('../../webhooks/customHeaders.js');
      const headers = ((a.header as string[] | undefined) ?? []).map(parseHeaderLine);
      const { createWebhook } = await config();
      const { standardSecret } = await signing();
      const { webhook, secret } = await createWebhook(s, {
        roomId: required(a, 'room'),
        url: required(a, 'url'),
        apiVersion,
        headers,
        createdById: optional(a, 'created-by') ?? null,
        eventTypes: eventsOption(a),
        maxDeliveriesPerSecond: throttleOption(a),
      });
      // the same key in the Standard Webhooks form (`whsec_` + base64 of the key bytes), for the standard's libraries
      return { id: webhook.id, secret, standardSecret: standardSecret(secret) };
    },
  },
  {
    name: 'webhook list',
    usage: 'svc webhook list [--room ROOM]',
    summary: "list webhooks (with --room: one room's), never their secrets",
    options: { room: { type: 'string', description: 'only the webhooks of this room (room_…)' } },
    columns: ['id', 'roomId', 'url', 'active', 'eventTypes', 'createdAt'],
    async run(a, { services: s }) {
      const { listAllWebhooks } = await config();
      const rows = await listAllWebhooks(s.ds.manager, optional(a, 'room'));
      return {
        data: rows.map((w) => ({
          id: w.id,
          roomId: w.roomId,
          organizationId: w.organizationId,
          url: w.url,
          apiVersion: w.apiVersion,
          active: w.active,
          disabledReason: w.disabledReason,
          eventTypes: w.eventTypes ?? [],
          maxDeliveriesPerSecond: w.maxDeliveriesPerSecond ?? null,
          // the names of its custom headers only: their values may be a receiver's credential
          customHeaders: w.headerNames,
          rotationEndsAt: w.rotationEndsAt,
          createdAt: w.createdAt,
        })),
      };
    },
  },
  {
    name: 'webhook update',
    usage: 'svc webhook update --id WH [--events a.b,c.d|all] [--max-per-second N|unlimited]',
    summary: "change which event types a webhook receives, or its deliveries' rate limit",
    options: { ...idOnly, ...subscriptionOptions },
    async run(a, { services: s }) {
      const eventTypes = eventsOption(a);
      const maxDeliveriesPerSecond = throttleOption(a);
      if (eventTypes === undefined && maxDeliveriesPerSecond === undefined)
        throw new UsageError('give --events and/or --max-per-second');
      const { updateWebhook } = await config();
      const w = await updateWebhook(s, required(a, 'id'), { eventTypes, maxDeliveriesPerSecond });
      return { id: w.id, eventTypes: w.eventTypes ?? [], maxDeliveriesPerSecond: w.maxDeliveriesPerSecond ?? null };
    },
  },
  {
    name: 'webhook recover',
    usage: 'svc webhook recover --id WH --since ISO',
    summary: 'send again, once each, every delivery of a webhook that finally failed since a time; prints {"queued":N}',
    options: {
      ...idOnly,
      since: {
        type: 'string',
        description:
          'ISO 8601 time: deliveries that finally failed at or after it are sent again (at most the attempt retention ago)',
      },
    },
    async run(a, { services: s }) {
      const { recoverWebhookDeliveries } = await import('../../webhooks/recover.js');
      return recoverWebhookDeliveries(s, undefined, { webhookId: required(a, 'id'), since: required(a, 'since') });
    },
  },
  {
    name: 'webhook rotate',
    usage: 'svc webhook rotate --id WH [--period-days D]   (D: 1-90, default 7)',
    summary: "start rotating a webhook's signing secret: both secrets sign until the rotation ends",
    options: {
      ...idOnly,
      'period-days': { type: 'string', description: 'days until the old secret stops signing, 1-90 (default 7)' },
    },
    async run(a, { services: s }) {
      const raw = optional(a, 'period-days');
      if (raw !== undefined && !/^\d+$/.test(raw))
        throw new UsageError('--period-days must be a whole number of days (1-90)');
      const { rotateWebhookSecret } = await import('../../webhooks/rotation.js');
      const { standardSecret } = await signing();
      const r = await rotateWebhookSecret(s, required(a, 'id'), {
        periodDays: raw === undefined ? undefined : Number(raw),
      });
      return { ...r, nextStandardSecret: standardSecret(r.nextSecret) };
    },
  },
  byId('webhook complete-rotation', 'end a rotation now: only the new secret signs', async (s, id) =>
    (await import('../../webhooks/rotation.js')).completeWebhookRotation(s, id),
  ),
  byId('webhook deactivate', 'stop delivering to a webhook', async (s, id) =>
    (await config()).setWebhookActive(s, id, false),
  ),
  byId('webhook activate', 'deliver to a deactivated webhook again', async (s, id) =>
    (await config()).setWebhookActive(s, id, true),
  ),
  byId('webhook delete', 'delete a webhook', async (s, id) => (await config()).deleteWebhook(s, id)),
  {
    name: 'webhook test',
    usage: 'svc webhook test --id WH   (sends a signed webhook.test event now and prints the outcome)',
    summary: 'send a signed webhook.test event now and print the outcome',
    options: idOnly,
    async run(a, { services: s }) {
      const { sendTestEvent } = await import('../../webhooks/redeliver.js');
      const { delivery: d, attempt } = await sendTestEvent(s, undefined, { webhookId: required(a, 'id') });
      return {
        id: d.id,
        deliveryId: d.deliveryId,
        eventId: d.eventId,
        eventType: d.eventType,
        success: d.state === 'succeeded',
        statusCode: attempt.statusCode,
        durationMs: attempt.durationMs,
        errorClass: attempt.record?.errorClass ?? null,
      };
    },
  },
  {
    name: 'webhook purge-attempts',
    usage:
      'svc webhook purge-attempts [--before ISO]   (default: records older than SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS, 30)',
    summary: 'delete old records of delivery attempts',
    options: { before: { type: 'string', description: 'delete records older than this time (ISO 8601)' } },
    async run(a, { services: s }) {
      const raw = optional(a, 'before');
      const before = raw === undefined ? undefined : new Date(raw);
      if (before && Number.isNaN(before.getTime())) throw new UsageError('--before must be an ISO 8601 time');
      const { purgeWebhookAttempts } = await import('../../webhooks/attemptLog.js');
      return { deleted: await purgeWebhookAttempts(s, before) };
    },
  },
  {
    name: 'worker',
    usage: 'svc worker   (runs the webhook delivery and agent run workers alone until SIGTERM/SIGINT)',
    summary: 'run the webhook delivery and agent run workers alone, until SIGTERM or SIGINT',
    options: {},
    async run(_a, { services: s }) {
      const stopTracing = s.config.tracing
        ? await (await import('../../observability/startTracing.js')).startTracing()
        : null;
      const { serveMetrics } = await import('../../observability/serveMetrics.js');
      const { createWebhookWorker } = await import('../../webhooks/deliveryWorker.js');
      const { createAgentRunWorker } = await import('../../agents/runWorker.js');
      const metricsServer = await serveMetrics(s);
      const worker = createWebhookWorker({ services: s });
      worker.start();
      // agent run invocations go through the same kind of outbox, so the same process runs them
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
