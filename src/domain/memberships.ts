import { In, type EntityManager } from 'typeorm';
import { Membership, Organization, RoomMember, User, type OrgRole } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { notFound } from './errors.js';
import { keysetPage, type PageInput } from './paging.js';

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
  const memberships = await m.find(Membership, { where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  const out: OrgChoice[] = [];
  for (const ms of memberships) {
    const org = await m.findOneBy(Organization, { id: ms.organizationId });
    if (org) out.push({ id: org.id, name: org.name, role: ms.role });
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
  const qb = m
    .getRepository(Membership)
    .createQueryBuilder('x')
    .where('x.organizationId = :organizationId', { organizationId });
  if (actor.roomId !== undefined)
    qb.andWhere(
      `x.userId IN (${m.getRepository(RoomMember).createQueryBuilder('rm').select('rm.userId').where('rm.roomId = :roomId').getQuery()})`,
      {
        roomId: actor.roomId,
      },
    );
  const rows = await keysetPage(qb, 'x.id', (r) => r.id, page, secret);
  const users = rows.data.length ? await m.findBy(User, { id: In(rows.data.map((r) => r.userId)) }) : [];
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
