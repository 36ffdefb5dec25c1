import { z } from 'zod';
import type { EventRow, WebhookApiVersion } from '../../db/entities/index.js';
import { API_V2, TEST_EVENT_TYPE } from './constants.js';

/** What a delivery row keeps of its event: enough to build either body again, on retry or redeliver. */
export const EventSnapshot = z.object({
  id: z.string().regex(/^evt_[A-Za-z0-9_-]{22}$/),
  type: z.string().min(1),
  createdAt: z.string().min(1),
  organizationId: z.string().nullable(),
  roomId: z.string().min(1),
  object: z.object({ type: z.string().min(1), id: z.string().min(1) }),
});
export type EventSnapshot = z.infer<typeof EventSnapshot>;

export const snapshotOf = (e: EventRow): EventSnapshot => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt,
  organizationId: e.organizationId,
  roomId: e.roomId,
  object: { type: e.objectType, id: e.objectId },
});

/** Parses a stored snapshot; null when it cannot be interpreted (redeliver answers 422). */
export function parseSnapshot(stored: string): EventSnapshot | null {
  try {
    const r = EventSnapshot.safeParse(JSON.parse(stored));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * The v2 body: `id`, `type`, `apiVersion`, `createdAt`, `organizationId`, `roomId` and an
 * ID-only `data.object`. `organizationId` is null for a room in a user's personal scope.
 */
export const v2Body = (e: EventSnapshot) => ({
  id: e.id,
  type: e.type,
  apiVersion: API_V2,
  createdAt: e.createdAt,
  organizationId: e.organizationId,
  roomId: e.roomId,
  data: { object: { id: e.object.id, type: e.object.type } },
  ...testMark(e),
});

/** A test event's body says so (`"test": true`, last key); other bodies are unchanged. */
const testMark = (e: EventSnapshot): { test?: true } => (e.type === TEST_EVENT_TYPE ? { test: true } : {});

/**
 * The v1 body: exactly the keys `event`, `timestamp`, `roomId`, `data`, `deliveryId`. Decided here
 * where the earlier receivers' contract leaves it open: `timestamp` is the event's ISO 8601 time, `data` is ID-only
 * `{ object: { id, type } }` as in v2, `deliveryId` the job's UUID (equal to `Svc-Webhook-Delivery`).
 */
export const v1Body = (e: EventSnapshot, deliveryId: string) => ({
  event: e.type,
  timestamp: e.createdAt,
  roomId: e.roomId,
  data: { object: { id: e.object.id, type: e.object.type } },
  deliveryId,
  ...testMark(e),
});

/** The raw bytes sent (and signed): serialized once per attempt, identical across the attempts of a job. */
export function buildBody(apiVersion: WebhookApiVersion, e: EventSnapshot, deliveryId: string): Buffer {
  return Buffer.from(JSON.stringify(apiVersion === API_V2 ? v2Body(e) : v1Body(e, deliveryId)), 'utf8');
}
