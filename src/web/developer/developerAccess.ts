import type { EntityManager } from 'typeorm';
import { roomOrganizationId, webhookRoomCandidates, webhookRoomId, type User } from '../../domain/developerAccess.js';
import { requireRoom } from '../../domain/access.js';
import { billingEntityOf, type Actor } from '../../domain/actor.js';
import { DomainError } from '../../domain/errors.js';
import type { OrgChoice } from '../../domain/memberships.js';
import type { Session } from '../session.js';

/** The signed-in user of a developer settings request. */
export interface SignedIn {
  session: Session;
  user: User;
}

/** The user's organizations (one reader of them, the consent page's too: src/domain/memberships.ts). */
export { organizationsOf, type OrgChoice } from '../../domain/memberships.js';

/** A room the user may manage webhooks of (room `manage` access). */
export interface ManagedRoom {
  id: string;
  name: string;
  organization: { id: string; name: string } | null;
}

/**
 * The signed-in user as a domain actor in one context (an organization or the personal scope), so the
 * pages go through the same room RBAC as /v1 (`requireRoom`). Used only for domain checks: the page is not
 * an API credential and writes no /v1 audit row.
 */
export function actorFor(who: SignedIn, organizationId: string | null): Actor {
  return {
    kind: 'user',
    userId: who.user.id,
    organizationId,
    billingEntity: billingEntityOf(who.user.id, organizationId),
    scopes: [],
    credential: { method: 'oauth_bearer', id: `web-session:${who.session.sid}` },
    plan: 'default',
  };
}

/**
 * The actor for acting on a room: in the room's own context. A room that does not exist gets the personal
 * context, where `requireRoom` answers 404 like for any room the user cannot see.
 */
export async function actorForRoom(m: EntityManager, who: SignedIn, roomId: string): Promise<Actor> {
  return actorFor(who, (await roomOrganizationId(m, roomId)) ?? null);
}

/** The actor for acting on a webhook: in its room's context (unknown webhooks answer 404 later). */
export async function actorForWebhook(m: EntityManager, who: SignedIn, webhookId: string): Promise<Actor> {
  const roomId = await webhookRoomId(m, webhookId);
  return roomId !== undefined ? actorForRoom(m, who, roomId) : actorFor(who, null);
}

/**
 * Ordinary rooms whose webhooks the user manages: the candidates (rooms of organizations they own or
 * administer, and rooms they created) filtered by `requireRoom(…, 'manage')` itself, so the list never
 * disagrees with the checks of the actions.
 */
export async function manageableRooms(m: EntityManager, who: SignedIn, orgs: OrgChoice[]): Promise<ManagedRoom[]> {
  const adminOrgs = orgs.filter((o) => o.role === 'owner' || o.role === 'admin').map((o) => o.id);
  const candidates = await webhookRoomCandidates(m, who.user.id, adminOrgs);
  const names = new Map(orgs.map((o) => [o.id, o.name]));
  const out: ManagedRoom[] = [];
  for (const room of candidates) {
    try {
      await requireRoom(m, actorFor(who, room.organizationId), room.id, 'manage');
    } catch (err) {
      if (err instanceof DomainError) continue;
      throw err;
    }
    const organization = room.organizationId
      ? { id: room.organizationId, name: names.get(room.organizationId) ?? room.organizationId }
      : null;
    out.push({ id: room.id, name: room.name, organization });
  }
  return out;
}
