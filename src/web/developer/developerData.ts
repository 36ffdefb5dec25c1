import type { EntityManager } from 'typeorm';
import { connectorNames } from '../../agents/connectorNames.js';
import { listConnectors } from '../../agents/connectors.js';
import { recentRunsOfRooms, roomsWithRuns } from '../../agents/runs.js';
import { chargeUnits } from '../../auth/units.js';
import { requireRoom } from '../../domain/access.js';
import { billingEntityOf } from '../../domain/actor.js';
import { approvalsOfOrganization } from '../../oauth/clientApprovals.js';
import { listApiKeys } from '../../domain/apiKeys.js';
import { DomainError } from '../../domain/errors.js';
import { nextMonthStart } from '../../domain/time.js';
import type { OrgConnectors, RoomRuns } from './agentsSection.js';
import type { Services } from '../../domain/services.js';
import {
  deliveriesPerHour,
  type DeliveryHour,
  listWebhookDeliveries,
  listWebhooksOfRooms,
  loadWebhookWithRoom,
  type Webhook,
  type WebhookDelivery,
} from '../../webhooks/index.js';
import { listRecentActivity, type ActivityRow } from './recentActivity.js';
import {
  actorFor,
  actorForWebhook,
  manageableRooms,
  organizationsOf,
  type ManagedRoom,
  type OrgChoice,
  type SignedIn,
} from './developerAccess.js';
import type { OrgApprovals } from './mcpClientsSection.js';

/** An API key as the pages show it (never its secret: only its hash is stored). */
export type ApiKey = Awaited<ReturnType<typeof listApiKeys>>[number];

/** Deliveries shown per webhook (newest first). */
export const DELIVERIES_SHOWN = 10;

export interface WebhookWithHistory {
  webhook: Webhook;
  deliveries: WebhookDelivery[];
  /** More deliveries exist than are shown. */
  more: boolean;
}

export interface RoomWebhooks {
  room: ManagedRoom;
  webhooks: WebhookWithHistory[];
}

/** One webhook's own page: its room, its recent deliveries and its last day per hour. */
export interface WebhookPageData extends WebhookWithHistory {
  room: ManagedRoom;
  hours: DeliveryHour[];
}

/** The units one billing context (an organization of the user, or the personal scope) used this month. */
export interface ContextUsage {
  /** The organization id, or null for the personal scope. */
  organizationId: string | null;
  label: string;
  used: number;
  limit: number;
  resetsAt: string;
}

export async function loadKeys(s: Services, who: SignedIn): Promise<{ orgs: OrgChoice[]; keys: ApiKey[] }> {
  const orgs = await organizationsOf(s.ds.manager, who.user.id);
  return { orgs, keys: await listApiKeys(s.ds.manager, who.user.id) };
}

/**
 * The rooms the user manages with their webhooks, each with its `deliveries` newest deliveries (the list shows
 * the latest one; a webhook's own page loads more).
 */
export async function loadWebhooks(s: Services, who: SignedIn, deliveries = 1): Promise<RoomWebhooks[]> {
  const m = s.ds.manager;
  const orgs = await organizationsOf(m, who.user.id);
  const rooms = await manageableRooms(m, who, orgs);
  const hooks = await listWebhooksOfRooms(
    m,
    rooms.map((r) => r.id),
  );
  const withHistory = await Promise.all(
    hooks.map(async (webhook) => {
      const page = await listWebhookDeliveries(m, webhook.id, { limit: deliveries }, s.secret);
      return { webhook, deliveries: page.data, more: page.nextCursor !== null };
    }),
  );
  return rooms.map((room) => ({ room, webhooks: withHistory.filter((h) => h.webhook.roomId === room.id) }));
}

/** One webhook the user manages (room RBAC `manage`), or a DomainError (404/403) when they cannot. */
export async function loadWebhookPage(s: Services, who: SignedIn, webhookId: string): Promise<WebhookPageData> {
  const m = s.ds.manager;
  const actor = await actorForWebhook(m, who, webhookId);
  const { webhook, room } = await loadWebhookWithRoom(m, webhookId, actor);
  const orgs = await organizationsOf(m, who.user.id);
  const org = room.organizationId ? orgs.find((o) => o.id === room.organizationId) : undefined;
  const page = await listWebhookDeliveries(m, webhook.id, { limit: DELIVERIES_SHOWN }, s.secret);
  return {
    webhook,
    deliveries: page.data,
    more: page.nextCursor !== null,
    room: {
      id: room.id,
      name: room.name,
      organization: room.organizationId ? { id: room.organizationId, name: org?.name ?? room.organizationId } : null,
    },
    hours: await deliveriesPerHour(m, webhook.id, s.now()),
  };
}

export async function loadMcp(
  s: Services,
  who: SignedIn,
): Promise<{ mcpClients: OrgApprovals[]; connectors: OrgConnectors[] }> {
  const m = s.ds.manager;
  const admin = (await organizationsOf(m, who.user.id)).filter((o) => o.role === 'owner' || o.role === 'admin');
  return {
    mcpClients: await Promise.all(
      admin.map(async (org) => ({ org, approvals: await approvalsOfOrganization(m, org.id) })),
    ),
    connectors: await Promise.all(admin.map(async (org) => ({ org, connectors: await listConnectors(m, org.id) }))),
  };
}

/** Recent agent runs of the rooms the user may read, with the names of the connectors they went through. */
export async function loadRuns(
  s: Services,
  who: SignedIn,
): Promise<{ runs: RoomRuns[]; connectors: Map<string, string> }> {
  const m = s.ds.manager;
  const runs = await runsOfRooms(m, who, await organizationsOf(m, who.user.id));
  return {
    runs,
    connectors: await connectorNames(
      m,
      runs.flatMap((r) => r.runs.map((x) => x.connectorId)),
    ),
  };
}

/** The user's recent activity and the units each of their billing contexts used this month. */
export async function loadActivity(
  s: Services,
  who: SignedIn,
): Promise<{ activity: ActivityRow[]; usage: ContextUsage[] }> {
  const m = s.ds.manager;
  const orgs = await organizationsOf(m, who.user.id);
  const keys = await listApiKeys(m, who.user.id);
  return { activity: await listRecentActivity(s, who.user.id, keys, orgs), usage: await usageOf(s, who, orgs) };
}

/** Units used this month per context (a zero charge reads the balance and writes nothing). */
export async function usageOf(s: Services, who: SignedIn, orgs: OrgChoice[]): Promise<ContextUsage[]> {
  const now = s.now();
  const limit = s.config.plans.default.monthlyUnits;
  const resetsAt = nextMonthStart(now).toISOString();
  const contexts = [
    ...orgs.map((o) => ({ id: o.id as string | null, label: o.name })),
    { id: null, label: 'Personal' },
  ];
  return Promise.all(
    contexts.map(async (c) => {
      const u = await chargeUnits(s.ds, billingEntityOf(who.user.id, c.id), now, 0, limit);
      return { organizationId: c.id, label: c.label, used: u.used, limit, resetsAt };
    }),
  );
}

/** Runs shown per room on the page (newest first). */
export const RUNS_SHOWN = 10;

/**
 * The recent agent runs of every room of the user's organizations that has runs and that the user may read
 * (`requireRoom(…, 'read')` itself decides: a member of the room, or an owner/admin of its organization).
 */
async function runsOfRooms(m: EntityManager, who: SignedIn, orgs: OrgChoice[]): Promise<RoomRuns[]> {
  if (!orgs.length) return [];
  const out: RoomRuns[] = [];
  for (const candidate of await roomsWithRuns(
    m,
    orgs.map((o) => o.id),
  )) {
    try {
      // in the room's own organization, through the one place of room RBAC
      const room = await requireRoom(m, actorFor(who, candidate.organizationId), candidate.id, 'read');
      out.push({ room: { id: room.id, name: room.name }, runs: await recentRunsOfRooms(m, [room.id], RUNS_SHOWN) });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
    }
  }
  return out;
}
