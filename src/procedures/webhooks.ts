import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import type { Webhook, WebhookDelivery } from '../../db/entities/index.js';
import { API_VERSIONS } from '../webhooks/constants.js';
import { listWebhookDeliveries } from '../webhooks/deliveryStore.js';
import { recoverWebhookDeliveries } from '../webhooks/recover.js';
import { redeliverWebhookDelivery, sendTestEvent } from '../webhooks/redeliver.js';
import { isRotating } from '../webhooks/rotation.js';
import { listRoomWebhooks, loadWebhook } from '../webhooks/webhookConfig.js';
import { forModel, idOf, listOf, pageInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { textArg } from './confirmTarget.js';
import type { ConfirmTargetOf } from './meta.js';
import { requireRoom } from '../domain/access.js';
import { findDeliveryWithRedeliveries } from '../webhooks/deliveryTarget.js';
import { AUTHORIZATION_HEADER } from '../http/headers.js';

// Webhooks on /v1: list, delivery history, redeliver. Creation, rotation and deletion
// are not /v1 operations, and no response here ever carries a secret, a custom header's
// value or a receiver's response body. Room access: `manage` (the room creator or an org admin).

/** A webhook as /v1 shows it: never a secret; custom headers by name only (their values may be credentials). */
export const WebhookView = z
  .object({
    id: idOf('wh'),
    roomId: idOf('room'),
    url: z.string().meta({ example: 'https://hooks.example.com/svc' }),
    apiVersion: z.enum(API_VERSIONS),
    active: z.boolean(),
    customHeaders: z
      .array(z.string())
      .meta({ description: 'Names of the custom headers; values are never shown', example: [AUTHORIZATION_HEADER] }),
    rotating: z
      .boolean()
      .meta({ description: 'A secret rotation is in progress: deliveries are signed with both secrets' }),
    rotationEndsAt: timestamp
      .nullable()
      .meta({ description: 'When the rotation completes by itself (null when not rotating)' }),
    eventTypes: z
      .array(z.string())
      .meta({ description: 'Event types delivered; empty: all', example: ['task.created'] }),
    maxDeliveriesPerSecond: z.number().int().nullable().meta({ description: 'Throttle; null: unlimited', example: 50 }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Webhook' });

const toWebhook = (w: Webhook, now: Date): z.infer<typeof WebhookView> => {
  const rotating = isRotating(w, now);
  return {
    id: w.id,
    roomId: w.roomId,
    url: w.url,
    apiVersion: w.apiVersion,
    active: w.active,
    customHeaders: w.headerNames,
    rotating,
    rotationEndsAt: rotating ? w.rotationEndsAt : null,
    eventTypes: w.eventTypes ?? [],
    maxDeliveriesPerSecond: w.maxDeliveriesPerSecond ?? null,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
};

/** A delivery as the public API shows it, plus eventId, eventType and attempts. Never the response body. */
export const WebhookDeliveryView = z
  .object({
    id: idOf('whd').meta({ description: 'History row id; the deliveryId path parameter of redeliver' }),
    deliveryId: z.uuid().meta({ description: 'Equals the Svc-Webhook-Delivery header of this delivery' }),
    statusCode: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'HTTP status of the receiver (last attempt); null when none answered' }),
    durationMs: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Duration of the last attempt; null before the first' }),
    finalizedAt: timestamp
      .nullable()
      .meta({ description: 'When the delivery was finalized; null while attempts remain' }),
    success: z.boolean(),
    eventId: z.string().meta({
      description: 'Svc-Webhook-Id: equal across redeliveries of one event',
      example: 'evt_3q2-7wEVjvXq0mFz7f4ZTA',
    }),
    eventType: z.string().meta({ example: 'record.created' }),
    attempts: z.number().int().meta({ description: 'Attempts made (at most 4; a redelivery makes one)' }),
  })
  .meta({ id: 'PublicWebhookDelivery' });

const toDelivery = (d: WebhookDelivery): z.infer<typeof WebhookDeliveryView> => ({
  id: d.id,
  deliveryId: d.deliveryId,
  statusCode: d.statusCode,
  durationMs: d.durationMs,
  finalizedAt: d.finalizedAt,
  success: d.state === 'succeeded',
  eventId: d.eventId,
  eventType: d.eventType,
  attempts: d.attempts,
});

const webhookPath = '/v1/rooms/{roomId}/webhooks/{webhookId}';

/**
 * The redeliver path parameter: the history row id; a `Svc-Webhook-Delivery` UUID passes here and gets a 404 saying so.
 */
const historyIdOrUuid = z
  .string()
  .max(68)
  .regex(
    /^(whd_[0-9A-Za-z]{1,64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/,
    'must be a whd_ identifier (the history row id)',
  )
  .meta({
    description:
      'The history row id (whd_…). The Svc-Webhook-Delivery UUID is answered 404 with a message naming the history id',
    example: 'whd_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
  });
forModel(historyIdOrUuid, 'The history row id (whd_…)');

/** What a test event's one attempt gave. */
const TestOutcomeView = z
  .object({
    success: z.boolean(),
    statusCode: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'HTTP status of the receiver; null when none answered' }),
    durationMs: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Duration of the attempt; null when nothing was sent' }),
    errorClass: z.string().nullable().meta({
      description:
        'Why it failed without a 2xx: timeout, connection_refused, connection_reset, dns, tls, ssrf_refused, redirect_not_followed, network_error, secret_unreadable; null on a response that is not a redirect',
      example: 'connection_refused',
    }),
  })
  .meta({ id: 'WebhookTestOutcome' });

/** What a person confirms before a delivery is sent again over MCP: its event type, state and redeliveries so far. */
const deliveryTarget: ConfirmTargetOf = async (m, actor, a) => {
  await requireRoom(m, actor, textArg(a.roomId), 'read');
  const found = await findDeliveryWithRedeliveries(m, textArg(a.roomId), textArg(a.webhookId), textArg(a.deliveryId));
  if (!found) return null;
  const { delivery: d, redeliveries } = found;
  return {
    id: d.id,
    version: `${d.state}|${d.attempts}|${redeliveries}`,
    shown: `the ${d.eventType} delivery ${d.id} (state: ${d.state}, ${redeliveries} redeliveries so far)`,
  };
};

export const webhooksRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/webhooks' },
      tool: {
        name: 'list_webhooks',
        title: 'List webhooks',
        description: 'Webhooks of a room (secrets and header values never shown); needs room manage access.',
      },
      summary: 'List the webhooks of a room',
      description:
        'Webhooks subscribed to the room, oldest first. Never shows a secret or a custom header value. Needs room manage access (the room creator or an organization owner/admin).',
      tags: ['webhooks'],
      scope: 'webhooks:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(listOf(WebhookView))
    .query(async ({ ctx, input }) => {
      const page = await listRoomWebhooks(ctx.services.ds.manager, ctx.actor, input.roomId, input, ctx.services.secret);
      const now = ctx.services.now();
      return { data: page.data.map((w) => toWebhook(w, now)), nextCursor: page.nextCursor };
    }),

  deliveries: apiProcedure
    .meta({
      http: { method: 'GET', path: `${webhookPath}/deliveries` },
      tool: {
        name: 'list_webhook_deliveries',
        title: 'List webhook deliveries',
        description: 'Deliveries of a webhook, newest first, pending ones included.',
      },
      summary: 'Delivery history of a webhook',
      description:
        "Deliveries of the webhook, newest first (pending ones included, with finalizedAt null). The receiver's response body is never returned.",
      tags: ['webhooks'],
      scope: 'webhooks:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(z.strictObject({ roomId: idOf('room'), webhookId: idOf('wh'), ...pageInput }))
    .output(listOf(WebhookDeliveryView))
    .query(async ({ ctx, input }) => {
      const m = ctx.services.ds.manager;
      const w = await loadWebhook(m, input.webhookId, ctx.actor, input.roomId);
      const page = await listWebhookDeliveries(m, w.id, input, ctx.services.secret);
      return { data: page.data.map(toDelivery), nextCursor: page.nextCursor };
    }),

  redeliver: apiProcedure
    .meta({
      http: { method: 'POST', path: `${webhookPath}/deliveries/{deliveryId}/redeliver` },
      tool: {
        name: 'redeliver_webhook_delivery',
        title: 'Redeliver a webhook delivery',
        description: "Sends a delivery's event again now, as a new history row; a failed send answers success=false.",
      },
      summary: 'Redeliver a webhook delivery',
      description:
        "Sends the delivery's event once more, now, with the same event id (Svc-Webhook-Id) and a new deliveryId, as a new history row. A failed HTTP delivery answers 200 with success=false. 404 not_found without the original delivery, and for a Svc-Webhook-Delivery UUID given in place of the whd_ history id (the message names the id the path takes, and the history id when the UUID belongs to this webhook), 409 webhook_inactive, 422 validation_error when its stored payload cannot be interpreted.",
      // a redelivery reaches another system again: a person confirms it over MCP (mcp/tools/confirm.ts)
      tags: ['webhooks'],
      scope: 'webhooks:write',
      units: 2,
      kind: 'write',
      destructive: true,
      confirmTarget: deliveryTarget,
      errors: [
        'not_found',
        'room_not_found',
        'forbidden',
        'webhook_inactive',
        { code: 'validation_error', status: 422 },
      ],
    })
    .input(z.strictObject({ roomId: idOf('room'), webhookId: idOf('wh'), deliveryId: historyIdOrUuid }))
    .output(z.object({ delivery: WebhookDeliveryView }))
    .mutation(({ ctx, input }) =>
      // the key's answer commits with the attempt's record (inWriteTransaction)
      redeliverWebhookDelivery(ctx.services, ctx.actor, input, (settle) =>
        inWriteTransaction(ctx, async (m) => ({ delivery: toDelivery(await settle(m)) })),
      ),
    ),

  test: apiProcedure
    .meta({
      http: { method: 'POST', path: `${webhookPath}/test` },
      tool: {
        name: 'test_webhook',
        title: 'Send a test event to a webhook',
        description:
          'Sends a signed webhook.test event now; returns the outcome (success=false and the error class on failure).',
      },
      summary: 'Send a test event',
      description:
        'Sends a signed test event now and answers with the outcome of that one attempt. Type webhook.test (never fired by a write), data.object is the webhook, marked by the Svc-Webhook-Test: true header and "test": true in the body. A history row like any delivery (no retry). A receiver failure answers 200 with success=false and the error class.',
      tags: ['webhooks'],
      scope: 'webhooks:write',
      units: 2,
      kind: 'write',
      errors: ['not_found', 'room_not_found', 'forbidden', 'webhook_inactive'],
    })
    .input(z.strictObject({ roomId: idOf('room'), webhookId: idOf('wh') }))
    .output(z.object({ delivery: WebhookDeliveryView, outcome: TestOutcomeView }))
    .mutation(({ ctx, input }) =>
      sendTestEvent(ctx.services, ctx.actor, input, (settle) =>
        inWriteTransaction(ctx, async (m) => {
          const { delivery, attempt } = await settle(m);
          return {
            delivery: toDelivery(delivery),
            outcome: {
              success: delivery.state === 'succeeded',
              statusCode: attempt.statusCode,
              durationMs: attempt.durationMs,
              errorClass: attempt.record?.errorClass ?? null,
            },
          };
        }),
      ),
    ),

  recover: apiProcedure
    .meta({
      http: { method: 'POST', path: `${webhookPath}/recover`, successStatus: 202 },
      tool: {
        name: 'recover_webhook_deliveries',
        title: 'Recover failed webhook deliveries',
        description:
          'After a receiver outage: sends again, once each, every event whose delivery finally failed since `since`.',
      },
      summary: 'Recover failed deliveries',
      docs: {
        what: 'Recover failed deliveries: every event whose delivery finally failed since `since`, once each (`202 {"queued":N}`)',
      },
      description:
        'Queues again each event whose delivery finally failed since `since` (same event id, new deliveryId); skips events delivered or pending. 400 rule_violation: since in the future or past the attempt retention.',
      tags: ['webhooks'],
      scope: 'webhooks:write',
      units: 2,
      kind: 'write',
      errors: ['not_found', 'room_not_found', 'forbidden', 'webhook_inactive', 'rule_violation'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        webhookId: idOf('wh'),
        since: z.iso
          .datetime({ offset: true })
          .max(64)
          .meta({ description: 'ISO 8601 time', example: '2026-11-22T09:30:00Z' }),
      }),
    )
    .output(
      z
        .object({ queued: z.number().int().meta({ description: 'Deliveries queued', example: 12 }) })
        .meta({ id: 'WebhookRecovery' }),
    )
    .mutation(({ ctx, input }) =>
      recoverWebhookDeliveries(ctx.services, ctx.actor, input, (write) => inWriteTransaction(ctx, write)),
    ),
});
