import type { EntityManager } from 'typeorm';
import type { Membership, OrgRole } from '../../db/entities/index.js';
import { membershipsOf, organizationMembersPage } from '../../db/stores/memberships.js';
import { usersByIds } from '../../db/stores/users.js';
import type { Actor } from './actor.js';
import { notFound } from './errors.js';
import { readPage, type PageInput } from './paging.js';

/** An organization the user belongs to, with the user's role in it. */
export interface OrgChoice {
  id: string;
  name: string;
  role: OrgRole;
}

/**
 * The user's organizations, oldest membership first: the first is the default acting context (of an OAuth
 * consent, of a new API key). The one reader of it for the consent page and the developer settings.
 */
export async function organizationsOf(m: EntityManager, userId: string): Promise<OrgChoice[]> {
  const out: OrgChoice[] = [];
  for (const { membership, organization } of await membershipsOf(m, userId)) {
    if (organization) out.push({ id: organization.id, name: organization.name, role: membership.role });
  }
  return out;
}

/**
 * A page of the members of the organization the actor acts in, oldest membership first, with their names: who
 * can be added to its rooms. Another organization (or any, in the individual context) is not found; an agent
 * run's delegated token sees only the members of its run's room, as every list it reads keeps to that room.
 */
export async function listOrganizationMembers(
  m: EntityManager,
  actor: Actor,
  organizationId: string,
  page: PageInput,
  secret: string,
) {
  if (!actor.organizationId || organizationId !== actor.organizationId) throw notFound('Organization');
  // an agent run's delegated token: the members of its run's room only
  const rows = await readPage<Membership>(
    page,
    secret,
    (r) => r.id,
    (bounds) => organizationMembersPage(m, organizationId, actor.roomId, bounds),
  );
  const users = await usersByIds(
    m,
    rows.data.map((r) => r.userId),
  );
  const names = new Map(users.map((u) => [u.id, u.name]));
  return {
    data: rows.data.map((r) => ({
      userId: r.userId,
      name: names.get(r.userId) ?? '',
      role: r.role,
      joinedAt: r.createdAt,
    })),
    nextCursor: rows.nextCursor,
  };
}
