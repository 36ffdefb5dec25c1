import { parseHeaderLine } from '../../webhooks/customHeaders.js';
import { createWebhookWorker } from '../../webhooks/deliveryWorker.js';
import { completeWebhookRotation, rotateWebhookSecret } from '../../webhooks/rotation.js';
import { createWebhook, deleteWebhook, setWebhookActive } from '../../webhooks/webhookConfig.js';
import { API_VERSIONS } from '../../webhooks/constants.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

const idOnly = { id: { type: 'string' as const } };

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
  {
    name: 'webhook complete-rotation',
    usage: 'svc webhook complete-rotation --id WH',
    options: idOnly,
    async run(a, { services: s }) {
      await completeWebhookRotation(s, required(a, 'id'));
      return {};
    },
  },
  {
    name: 'webhook deactivate',
    usage: 'svc webhook deactivate --id WH',
    options: idOnly,
    async run(a, { services: s }) {
      await setWebhookActive(s, required(a, 'id'), false);
      return {};
    },
  },
  {
    name: 'webhook activate',
    usage: 'svc webhook activate --id WH',
    options: idOnly,
    async run(a, { services: s }) {
      await setWebhookActive(s, required(a, 'id'), true);
      return {};
    },
  },
  {
    name: 'webhook delete',
    usage: 'svc webhook delete --id WH',
    options: idOnly,
    async run(a, { services: s }) {
      await deleteWebhook(s, required(a, 'id'));
      return {};
    },
  },
  {
    name: 'worker',
    usage: 'svc worker   (runs the webhook delivery worker alone until SIGTERM/SIGINT)',
    options: {},
    async run(_a, { services: s }) {
      const worker = createWebhookWorker({ services: s });
      worker.start();
      process.stderr.write(`webhook worker ${worker.owner} running; SIGTERM or SIGINT stops it\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      await worker.stop();
      return {};
    },
  },
];
