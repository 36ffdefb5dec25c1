import type { EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { AgentRun, Room, Webhook, type ApiKey, type WebhookDelivery } from '../../../db/entities/index.js';
import { listConnectors } from '../../agents/connectors.js';
import { recentRunsOfRooms } from '../../agents/runs.js';
import { requireRoom } from '../../domain/access.js';
import { approvalsOfOrganization } from '../../oauth/clientApprovals.js';
import { listApiKeys } from '../../domain/apiKeys.js';
import { DomainError } from '../../domain/errors.js';
import type { OrgConnectors, RoomRuns } from './agentsSection.js';
import type { Services } from '../../domain/services.js';
import { listWebhookDeliveries } from '../../webhooks/index.js';
import { listRecentActivity, type ActivityRow } from './recentActivity.js';
import {
  actorFor,
  manageableRooms,
  organizationsOf,
  type ManagedRoom,
  type OrgChoice,
  type SignedIn,
} from './developerAccess.js';
import type { OrgApprovals } from './mcpClientsSection.js';

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

/** Everything the developer settings page shows, read for the signed-in user. Holds no secret. */
export interface DeveloperData {
  orgs: OrgChoice[];
  keys: ApiKey[];
  rooms: RoomWebhooks[];
  activity: ActivityRow[];
  /** The organizations the user administers, with their approved MCP clients. */
  mcpClients: OrgApprovals[];
  /** Agent connectors of the organizations the user owns or administers. */
  connectors: OrgConnectors[];
  /** Recent agent runs of the rooms (with runs) the user may read. */
  runs: RoomRuns[];
}

export async function loadDeveloperData(s: Services, who: SignedIn): Promise<DeveloperData> {
  const m = s.ds.manager;
  const orgs = await organizationsOf(m, who.user.id);
  const keys = await listApiKeys(m, who.user.id);
  const rooms = await manageableRooms(m, who, orgs);
  const hooks = rooms.length
    ? await m.find(Webhook, { where: { roomId: In(rooms.map((r) => r.id)) }, order: { id: 'ASC' } })
    : [];
  const withHistory = await Promise.all(
    hooks.map(async (webhook) => {
      const page = await listWebhookDeliveries(m, webhook.id, { limit: DELIVERIES_SHOWN }, s.secret);
      return { webhook, deliveries: page.data, more: page.nextCursor !== null };
    }),
  );
  return {
    orgs,
    keys,
    rooms: rooms.map((room) => ({ room, webhooks: withHistory.filter((h) => h.webhook.roomId === room.id) })),
    activity: await listRecentActivity(s, who.user.id, keys, orgs),
    mcpClients: await Promise.all(
      orgs
        .filter((o) => o.role === 'owner' || o.role === 'admin')
        .map(async (org) => ({ org, approvals: await approvalsOfOrganization(m, org.id) })),
    ),
    connectors: await Promise.all(
      orgs
        .filter((o) => o.role === 'owner' || o.role === 'admin')
        .map(async (org) => ({ org, connectors: await listConnectors(m, org.id) })),
    ),
    runs: await runsOfRooms(m, who, orgs),
  };
}

/** Runs shown per room on the page (newest first). */
export const RUNS_SHOWN = 10;

/**
 * The recent agent runs of every room of the user's organizations that has runs and that the user may read
 * (`requireRoom(…, 'read')` itself decides: a member of the room, or an owner/admin of its organization).
 */
async function runsOfRooms(m: EntityManager, who: SignedIn, orgs: OrgChoice[]): Promise<RoomRuns[]> {
  if (!orgs.length) return [];
  const withRuns = await m
    .getRepository(AgentRun)
    .createQueryBuilder('x')
    .select('DISTINCT x.roomId', 'roomId')
    .where('x.organizationId IN (:...orgs)', { orgs: orgs.map((o) => o.id) })
    .getRawMany<{ roomId: string }>();
  const out: RoomRuns[] = [];
  for (const { roomId } of withRuns.sort((a, b) => (a.roomId < b.roomId ? -1 : 1))) {
    const candidate = await m.findOneBy(Room, { id: roomId });
    if (!candidate) continue;
    try {
      // in the room's own organization, through the one place of room RBAC
      const room = await requireRoom(m, actorFor(who, candidate.organizationId), roomId, 'read');
      out.push({ room: { id: room.id, name: room.name }, runs: await recentRunsOfRooms(m, [room.id], RUNS_SHOWN) });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
    }
  }
  return out;
}
