import type { EntityManager } from 'typeorm';
import { type Room, Webhook, type WebhookApiVersion } from '../../db/entities/index.js';
import { deleteDeliveriesOfWebhook } from '../../db/stores/deliveries.js';
import {
  creatorExists,
  deleteWebhookRow,
  findWebhook,
  insertWebhook,
  roomOfWebhook,
  updateWebhookRow,
  webhooksOfRoom,
  webhooksOfRooms,
  allWebhooks,
} from '../../db/stores/webhooks.js';
import { requireRoom } from '../domain/access.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, notFound, roomNotFound, validationError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type Page, type PageInput, readPage } from '../domain/paging.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { EVENT_CATALOG, STABLE_EVENT_TYPES } from '../domain/catalog.js';
import { API_V2, API_VERSIONS, MAX_DELIVERIES_PER_SECOND } from './constants.js';
import { type CustomHeader, validateCustomHeaders } from './customHeaders.js';
import { deliveryDepsFor } from './deliveryDeps.js';
import { decryptSecret, encryptSecret, newWebhookSecret } from './secretBox.js';
import { checkOutboundUrl, UrlRefusedError } from '../outbound/ssrfGuard.js';

// Webhook configuration. Creation, rotation, (de)activation and deletion happen in the
// developer settings screen and the operator CLI, never through /v1. Each function takes
// an optional actor: with one, room RBAC `manage` applies (requireRoom); without, the caller is the operator.

const MAX_URL = 2048;

export interface CreateWebhookInput {
  roomId: string;
  url: string;
  apiVersion?: string;
  headers?: CustomHeader[];
  /** Stable event types to deliver; absent or empty: every stable type. */
  eventTypes?: string[];
  /** At most this many deliveries per second; absent or null: unlimited. */
  maxDeliveriesPerSecond?: number | null;
  /** Recorded creator; the actor's user when an actor is given. */
  createdById?: string | null;
  actor?: Actor;
}

/**
 * Checks a receiver URL as creation does: a clear validation_error naming the reason when it
 * points into an internal network. A host name that does not resolve yet is accepted; every delivery
 * checks again.
 */
export async function assertWebhookUrlAllowed(s: Services, url: string): Promise<void> {
  if (url.length > MAX_URL) throw validationError(`URL is limited to ${MAX_URL} characters`, { field: 'url' });
  try {
    await checkOutboundUrl(url, deliveryDepsFor(s).policy, { allowUnresolvable: true });
  } catch (err) {
    if (err instanceof UrlRefusedError) throw validationError(err.message, { field: 'url', reason: err.reason });
    throw err;
  }
}

async function roomFor(m: EntityManager, roomId: string, actor?: Actor): Promise<Room> {
  if (actor) return requireRoom(m, actor, roomId, 'manage');
  const room = await roomOfWebhook(m, roomId);
  if (!room) throw notFound('Room');
  if (room.roomType === 1) throw roomNotFound();
  return room;
}

/** Creates a webhook; the secret is returned here once and kept only encrypted. New webhooks default to v2. */
export async function createWebhook(
  s: Services,
  input: CreateWebhookInput,
): Promise<{ webhook: Webhook; secret: string }> {
  const apiVersion = (input.apiVersion ?? API_V2) as WebhookApiVersion;
  if (!API_VERSIONS.includes(apiVersion)) {
    throw validationError(`apiVersion must be one of ${API_VERSIONS.join(', ')}`, { field: 'apiVersion' });
  }
  const headers = validateCustomHeaders(input.headers ?? []);
  const eventTypes = validateEventTypes(input.eventTypes ?? []);
  const maxDeliveriesPerSecond = validateThrottle(input.maxDeliveriesPerSecond ?? null);
  const url = input.url.trim();
  // who may manage the room is settled before the URL is resolved: a caller without the right learns
  // nothing from DNS (no lookup, no timing), and gets the same 404/403 as for any other change
  await roomFor(s.ds.manager, input.roomId, input.actor);
  await assertWebhookUrlAllowed(s, url);
  const { key } = deliveryDepsFor(s);
  const secret = newWebhookSecret();
  const webhook = await inTransaction(s, async (m) => {
    const room = await roomFor(m, input.roomId, input.actor); // again, in the transaction that writes
    const createdById = input.actor?.userId ?? input.createdById ?? null;
    if (createdById && !input.actor && !(await creatorExists(m, createdById))) throw notFound('User');
    const now = iso(s.now());
    const w = Object.assign(new Webhook(), {
      id: newId('wh', s.now().getTime()),
      roomId: room.id,
      organizationId: room.organizationId,
      url,
      apiVersion,
      secretEnc: encryptSecret(key, secret),
      nextSecretEnc: null,
      rotationEndsAt: null,
      headerNames: headers.map(([n]) => n),
      headersEnc: headers.length ? encryptSecret(key, JSON.stringify(headers)) : null,
      eventTypes,
      maxDeliveriesPerSecond,
      active: true,
      failingSince: null,
      disabledReason: null,
      disabledAt: null,
      createdById,
      createdAt: now,
      updatedAt: now,
    } satisfies Webhook);
    await insertWebhook(m, w);
    return w;
  });
  return { webhook, secret };
}

export { MAX_DELIVERIES_PER_SECOND };

/** The stable types in catalog order, for the forms and the error messages. */
export const FILTERABLE_EVENT_TYPES = EVENT_CATALOG.filter((e) => e.stable).map((e) => e.type as string);

/**
 * Checks an event-type filter: every entry a stable type of the catalog (a preview type is never delivered,
 * so a filter naming one is refused rather than silently never matching). Returns the types in catalog
 * order without repeats, or null for an empty filter (every stable type).
 */
export function validateEventTypes(types: string[]): string[] | null {
  const given = new Set(types.map((t) => t.trim()).filter(Boolean));
  for (const t of given) {
    if (STABLE_EVENT_TYPES.has(t)) continue;
    const preview = EVENT_CATALOG.some((e) => e.type === t);
    throw validationError(
      preview
        ? `${t} is a preview event type and is never delivered to webhooks; a filter takes stable types only`
        : `Unknown event type ${JSON.stringify(t.slice(0, 100))}; the stable types are ${FILTERABLE_EVENT_TYPES.join(', ')}`,
      {
        field: 'eventTypes',
        eventType: t.slice(0, 100),
        reason: preview ? 'preview_event_type' : 'unknown_event_type',
      },
    );
  }
  const kept = FILTERABLE_EVENT_TYPES.filter((t) => given.has(t));
  return kept.length ? kept : null;
}

/** Checks a throttle: null (unlimited) or a whole number of deliveries per second, 1 to MAX_DELIVERIES_PER_SECOND. */
export function validateThrottle(max: number | null): number | null {
  if (max === null) return null;
  if (!Number.isInteger(max) || max < 1 || max > MAX_DELIVERIES_PER_SECOND) {
    throw validationError(
      `maxDeliveriesPerSecond is a whole number from 1 to ${MAX_DELIVERIES_PER_SECOND}, or none for unlimited`,
      {
        field: 'maxDeliveriesPerSecond',
        max: MAX_DELIVERIES_PER_SECOND,
      },
    );
  }
  return max;
}

/** Whether a webhook with filter `eventTypes` takes events of `type` (no filter: every type). */
export const webhookTakes = (eventTypes: readonly string[] | null, type: string): boolean =>
  !eventTypes || eventTypes.length === 0 || eventTypes.includes(type);

export interface UpdateWebhookInput {
  /** The new filter; undefined keeps it, empty clears it (every stable type). */
  eventTypes?: string[];
  /** The new throttle; undefined keeps it, null removes it. */
  maxDeliveriesPerSecond?: number | null;
}

/**
 * Changes a webhook's event-type filter and throttle. Deliveries already queued stay queued; the filter
 * decides for events written from now on (and for what `recover` queues).
 */
export async function updateWebhook(
  s: Services,
  id: string,
  input: UpdateWebhookInput,
  actor?: Actor,
): Promise<Webhook> {
  const change: Partial<Pick<Webhook, 'eventTypes' | 'maxDeliveriesPerSecond'>> = {};
  if (input.eventTypes !== undefined) change.eventTypes = validateEventTypes(input.eventTypes);
  if (input.maxDeliveriesPerSecond !== undefined)
    change.maxDeliveriesPerSecond = validateThrottle(input.maxDeliveriesPerSecond);
  return inTransaction(s, async (m) => {
    const w = await loadWebhook(m, id, actor);
    if (!Object.keys(change).length) return w;
    const updatedAt = iso(s.now());
    await updateWebhookRow(m, id, { ...change, updatedAt });
    return Object.assign(w, change, { updatedAt });
  });
}

/** Loads a webhook the caller may manage (operator: any), or 404 `not_found`. */
export async function loadWebhook(m: EntityManager, id: string, actor?: Actor, roomId?: string): Promise<Webhook> {
  if (actor && roomId !== undefined) await requireRoom(m, actor, roomId, 'manage');
  const w = await findWebhook(m, id);
  if (!w || (roomId !== undefined && w.roomId !== roomId)) throw notFound('Webhook');
  if (actor && roomId === undefined) await requireRoom(m, actor, w.roomId, 'manage');
  return w;
}

/** Every webhook of the rooms given, oldest first (the developer pages list the rooms the user manages). */
export const listWebhooksOfRooms = (m: EntityManager, roomIds: string[]): Promise<Webhook[]> =>
  webhooksOfRooms(m, roomIds);

/** Every webhook, or one room's, by creation time: the operator's list (no access check). */
export const listAllWebhooks = (m: EntityManager, roomId?: string): Promise<Webhook[]> => allWebhooks(m, roomId);

/** A webhook the actor may manage with its room (the pages name the room), or the errors of loadWebhook. */
export async function loadWebhookWithRoom(
  m: EntityManager,
  id: string,
  actor: Actor,
): Promise<{ webhook: Webhook; room: Room }> {
  const webhook = await loadWebhook(m, id, actor);
  return { webhook, room: await requireRoom(m, actor, webhook.roomId, 'manage') };
}

/** Webhooks of a room (room `manage` access), oldest first, in pages. */
export async function listRoomWebhooks(
  m: EntityManager,
  actor: Actor,
  roomId: string,
  page: PageInput,
  secret: string,
): Promise<Page<Webhook>> {
  await requireRoom(m, actor, roomId, 'manage');
  return readPage<Webhook>(
    page,
    secret,
    (w) => w.id,
    (b) => webhooksOfRoom(m, roomId, b),
  );
}

/**
 * Activates or deactivates. Deliveries already queued for a deactivated webhook are finalized unsent
 * (`webhook_inactive`); its events stay in the event log and can be redelivered once it is active again.
 * Activating clears an automatic disable (its reason and the failure streak: the period starts afresh).
 */
export async function setWebhookActive(s: Services, id: string, active: boolean, actor?: Actor): Promise<void> {
  await inTransaction(s, async (m) => {
    await loadWebhook(m, id, actor);
    const cleared = active ? { failingSince: null, disabledReason: null, disabledAt: null } : {};
    await updateWebhookRow(m, id, { active, ...cleared, updatedAt: iso(s.now()) });
  });
}

/** Deletes a webhook with its queued deliveries, history and attempt records. */
export async function deleteWebhook(s: Services, id: string, actor?: Actor): Promise<void> {
  await inTransaction(s, async (m) => {
    await loadWebhook(m, id, actor);
    await deleteDeliveriesOfWebhook(m, id);
    await deleteWebhookRow(m, id);
  });
}

/** The custom headers in clear, for the sender only. */
export function customHeadersOf(
  key: Buffer,
  w: Pick<Webhook, 'headersEnc'>,
  decrypt: (sealed: string) => string = (sealed) => decryptSecret(key, sealed),
): CustomHeader[] {
  return w.headersEnc ? (JSON.parse(decrypt(w.headersEnc)) as CustomHeader[]) : [];
}

/** Refuses a change that needs the webhook to be in another state. */
export const invalidState = (message: string) => new DomainError('invalid_state', message);
