import { createHmac } from 'node:crypto';
import type { WebhookApiVersion } from '../../db/entities/index.js';
import { API_V1, TEST_EVENT_TYPE, USER_AGENT, V1_EVENT_TYPES, WEBHOOK_LEGACY_HEADER_SUNSET_AT } from './constants.js';
import { type CustomHeader, isStandardHeaderName } from './customHeaders.js';
import {
  CONTENT_TYPE_HEADER,
  DEPRECATION_HEADER,
  LEGACY_WEBHOOK_DELIVERY_ID_HEADER,
  LEGACY_WEBHOOK_EVENT_HEADER,
  LEGACY_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  SUNSET_HEADER,
  USER_AGENT_HEADER,
  WEBHOOK_API_VERSION_HEADER,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_TEST_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TYPE_HEADER,
} from '../http/headers.js';

/** HMAC-SHA256, hex, over the bytes of `<timestamp>.<raw body>`, keyed with the secret. */
export function signPayload(secret: string, timestamp: number, body: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** `v1=<hex>`, during rotation `v1=<current>,v1=<next>`. */
export function signatureHeader(
  secrets: { current: string; next: string | null },
  timestamp: number,
  body: Buffer,
): string {
  const entries = [secrets.current, ...(secrets.next ? [secrets.next] : [])].map(
    (s) => `v1=${signPayload(s, timestamp, body)}`,
  );
  return entries.join(',');
}

/**
 * Standard Webhooks 1.0 (standardwebhooks.com): HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`,
 * base64. The key is the same bytes `Svc-Webhook-Signature` uses (the secret string's UTF-8 bytes), so
 * one stored secret gives both; receivers hold it as `standardSecret(secret)`.
 */
export function signStandard(secret: string, msgId: string, timestamp: number, body: Buffer): string {
  return createHmac('sha256', secret).update(`${msgId}.${timestamp}.`).update(body).digest('base64');
}

/** `webhook-signature`: `v1,<base64>` per secret, separated by spaces (both secrets during rotation). */
export function standardSignatureHeader(
  secrets: { current: string; next: string | null },
  msgId: string,
  timestamp: number,
  body: Buffer,
): string {
  const entries = [secrets.current, ...(secrets.next ? [secrets.next] : [])].map(
    (s) => `v1,${signStandard(s, msgId, timestamp, body)}`,
  );
  return entries.join(' ');
}

/**
 * A secret in the Standard Webhooks form: `whsec_` + base64 of the HMAC key bytes. svc's secrets are used
 * as their UTF-8 bytes, so this is the base64 of the whole secret string (prefix included): the libraries
 * of the standard then compute exactly the key svc signs with.
 */
export const standardSecret = (secret: string): string => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;

/** `Sunset` value (RFC 8594, IMF-fixdate): `Thu, 31 Dec 2026 00:00:00 GMT`. */
export const SUNSET_HTTP_DATE = WEBHOOK_LEGACY_HEADER_SUNSET_AT.toUTCString();

/**
 * Legacy headers only on v1 rows, only before the sunset (by the injected
 * clock), only for events of the v1 enumeration.
 */
export function sendsLegacyHeaders(apiVersion: WebhookApiVersion, eventType: string, now: Date): boolean {
  return (
    apiVersion === API_V1 && now.getTime() < WEBHOOK_LEGACY_HEADER_SUNSET_AT.getTime() && V1_EVENT_TYPES.has(eventType)
  );
}

export interface DeliveryHeaderInput {
  apiVersion: WebhookApiVersion;
  eventId: string;
  eventType: string;
  deliveryId: string;
  secrets: { current: string; next: string | null };
  body: Buffer;
  /** The attempt's time: gives `Svc-Webhook-Timestamp` and decides the sunset rule. */
  now: Date;
  customHeaders: CustomHeader[];
}

/**
 * Every header of one attempt, signed afresh with this attempt's timestamp. Custom headers
 * come first and may replace only `Content-Type` and `User-Agent`; the sender's own headers are written
 * last (protected names were refused at creation, and are overwritten here anyway).
 */
export function buildDeliveryHeaders(o: DeliveryHeaderInput): Record<string, string> {
  const timestamp = Math.floor(o.now.getTime() / 1000);
  const headers: Record<string, string> = {
    [CONTENT_TYPE_HEADER]: 'application/json',
    [USER_AGENT_HEADER]: USER_AGENT[o.apiVersion],
  };
  for (const [name, value] of o.customHeaders) {
    const lower = name.toLowerCase();
    // never one of the standard's names (refused at creation; a value stored before that rule is dropped)
    if (isStandardHeaderName(name)) continue;
    const existing = Object.keys(headers).find((k) => k.toLowerCase() === lower);
    if (existing) delete headers[existing];
    headers[name] = value;
  }
  Object.assign(headers, {
    [WEBHOOK_ID_HEADER]: o.eventId,
    [WEBHOOK_DELIVERY_HEADER]: o.deliveryId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(o.secrets, timestamp, o.body),
    [WEBHOOK_TYPE_HEADER]: o.eventType,
    [WEBHOOK_API_VERSION_HEADER]: o.apiVersion,
  });
  if (o.eventType === TEST_EVENT_TYPE) headers[WEBHOOK_TEST_HEADER] = 'true';
  // Standard Webhooks beside the `Svc-Webhook-*` headers: the event id is the message id, so a retry or a
  // redelivery keeps it (the standard's idempotency key)
  headers[STANDARD_WEBHOOK_ID_HEADER] = o.eventId;
  headers[STANDARD_WEBHOOK_TIMESTAMP_HEADER] = String(timestamp);
  headers[STANDARD_WEBHOOK_SIGNATURE_HEADER] = standardSignatureHeader(o.secrets, o.eventId, timestamp, o.body);
  if (sendsLegacyHeaders(o.apiVersion, o.eventType, o.now)) {
    Object.assign(headers, {
      // rule 4: over the raw body actually sent, current secret only, even during rotation
      [LEGACY_WEBHOOK_SIGNATURE_HEADER]: createHmac('sha256', o.secrets.current).update(o.body).digest('hex'),
      [LEGACY_WEBHOOK_EVENT_HEADER]: o.eventType,
      [LEGACY_WEBHOOK_DELIVERY_ID_HEADER]: o.deliveryId,
      [SUNSET_HEADER]: SUNSET_HTTP_DATE,
      [DEPRECATION_HEADER]: 'true',
    });
  }
  return headers;
}
