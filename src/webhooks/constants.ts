import type { WebhookApiVersion } from '../../db/entities/index.js';

/** The v1 contract, kept for existing webhooks. */
export const API_V1: WebhookApiVersion = '2025-10-23';
/** The v2 contract, the default for new webhooks. */
export const API_V2: WebhookApiVersion = '2026-06-09';
export const API_VERSIONS = [API_V2, API_V1] as const;

/** User-Agent per contract. */
export const USER_AGENT: Record<WebhookApiVersion, string> = {
  '2025-10-23': 'Svc-Webhook/1.0',
  '2026-06-09': 'Svc-Webhook/2.0',
};

/**
 * The v1 event enumeration: the events the
 * earlier implementation sent, the catalog's `v1` column (src/domain/catalog.ts). Events outside it
 * (message.created, task.created, file.uploaded and the v2 aliases record.approval_requested /
 * record.approved) still reach v1 webhooks with the v1 body, but with the `Svc-Webhook-*` headers only,
 * never the legacy ones.
 */
export { V1_EVENT_TYPES } from '../domain/catalog.js';

/**
 * Legacy `X-Webhook-*`, `Sunset` and `Deprecation` headers are never sent at or after this instant.
 * Compared with the sender's injected clock.
 */
export const WEBHOOK_LEGACY_HEADER_SUNSET_AT = new Date('2026-12-31T00:00:00Z');

/** Total attempts of one delivery job: the first plus up to 3 retries. */
export const MAX_ATTEMPTS = 4;
/** Receiver response bytes kept for operators; never exposed. */
export const RESPONSE_PREVIEW_BYTES = 2048;
/** Rotation period in days: default 7, maximum 90. */
export const DEFAULT_ROTATION_DAYS = 7;
export const MAX_ROTATION_DAYS = 90;

/**
 * The test event: outside the catalog, never fired by a domain write, sent on demand to one
 * webhook. Marked as a test by the `Svc-Webhook-Test: true` header and `"test": true` in the body.
 */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The most a throttle may allow; more is no throttle at all and is refused as a likely typo. */
export const MAX_DELIVERIES_PER_SECOND = 1000;
