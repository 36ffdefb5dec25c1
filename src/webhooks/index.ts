// The webhooks area as other areas use it (the developer settings pages, the CLI, main.ts). Every function
// that changes a configuration takes an optional actor: with one, room `manage` access is checked.
export {
  API_V1,
  API_V2,
  API_VERSIONS,
  TEST_EVENT_TYPE,
  DEFAULT_ROTATION_DAYS,
  MAX_ROTATION_DAYS,
  V1_EVENT_TYPES,
  WEBHOOK_LEGACY_HEADER_SUNSET_AT,
} from './constants.js';
export { parseHeaderLine, validateCustomHeaders, type CustomHeader } from './customHeaders.js';
export { configureWebhookDelivery, type WebhookDeliveryDeps } from './deliveryDeps.js';
export { listWebhookDeliveries } from './deliveryStore.js';
export { createWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from './deliveryWorker.js';
export { registerWebhookOutbox } from './outbox.js';
export { findWebhookDelivery, redeliverWebhookDelivery, sendTestEvent, type SentNow } from './redeliver.js';
export { disabledReason, listDeliveryAttempts, purgeWebhookAttempts } from './attemptLog.js';
export { HIDDEN_HEADER_VALUE } from './attemptDelivery.js';
export { completeWebhookRotation, isRotating, rotateWebhookSecret } from './rotation.js';
export {
  assertWebhookUrlAllowed,
  createWebhook,
  deleteWebhook,
  FILTERABLE_EVENT_TYPES,
  listAllWebhooks,
  listRoomWebhooks,
  listWebhooksOfRooms,
  loadWebhook,
  loadWebhookWithRoom,
  MAX_DELIVERIES_PER_SECOND,
  setWebhookActive,
  updateWebhook,
  type CreateWebhookInput,
} from './webhookConfig.js';
export { recoverWebhookDeliveries } from './recover.js';
export { standardSecret } from './signing.js';
export { verifyWebhook, verifyLegacyWebhookSignature, WEBHOOK_REPLAY_WINDOW_SECONDS } from './verifyWebhook.js';
export { deliveriesPerHour, type DeliveryHour } from './deliveriesPerHour.js';
export type { Webhook, WebhookApiVersion, WebhookAttempt, WebhookDelivery } from '../../db/entities/index.js';
