import type { EntityManager } from 'typeorm';
import { Membership, Organization, RoomMember, type OrgRole } from '../entities/index.js';
import { keysetEntities, type KeysetBounds } from './paging.js';

/**
 * Memberships of users in organizations: through TypeORM's entity (its columns are the list). The request path
 * reads a role with the access check (db/stores/access.ts); what is here is the member list and its writes.
 */
export async function membership(m: EntityManager, organizationId: string, userId: string): Promise<Membership | null> {
  return m.findOneBy(Membership, { organizationId, userId });
}

export async function isOrganizationMember(m: EntityManager, organizationId: string, userId: string): Promise<boolean> {
  return (await m.countBy(Membership, { organizationId, userId })) > 0;
}

/** Whether the two users share at least one organization. */
export async function shareAnOrganization(m: EntityManager, userId: string, otherId: string): Promise<boolean> {
  const shared = await m
    .getRepository(Membership)
    .createQueryBuilder('theirs')
    .innerJoin(Membership, 'mine', 'mine.organizationId = theirs.organizationId AND mine.userId = :me', {
      me: userId,
    })
    .where('theirs.userId = :them', { them: otherId })
    .getCount();
  return shared > 0;
}

export async function insertMembership(m: EntityManager, ms: Membership): Promise<void> {
  await m.insert(Membership, ms);
}

export async function setMembershipRole(m: EntityManager, id: string, role: OrgRole): Promise<void> {
  await m.update(Membership, { id }, { role });
}

/** The user's memberships with their organizations, oldest membership first. */
export async function membershipsOf(
  m: EntityManager,
  userId: string,
): Promise<{ membership: Membership; organization: Organization | null }[]> {
  const memberships = await m.find(Membership, { where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  const out: { membership: Membership; organization: Organization | null }[] = [];
  for (const ms of memberships) {
    out.push({ membership: ms, organization: await m.findOneBy(Organization, { id: ms.organizationId }) });
  }
  return out;
}

/** A page of the memberships of an organization, oldest first; with `roomId`, only of that room's members. */
export async function organizationMembersPage(
  m: EntityManager,
  organizationId: string,
  roomId: string | undefined,
  bounds: KeysetBounds,
): Promise<Membership[]> {
  const qb = m
    .getRepository(Membership)
    .createQueryBuilder('x')
    .where('x.organizationId = :organizationId', { organizationId });
  if (roomId !== undefined)
    qb.andWhere(
      `x.userId IN (${m.getRepository(RoomMember).createQueryBuilder('rm').select('rm.userId').where('rm.roomId = :roomId').getQuery()})`,
      { roomId },
    );
  return keysetEntities(qb, 'x.id', bounds);
}

/** The memberships of an organization (any order). */
export async function membershipsIn(m: EntityManager, organizationId: string): Promise<Membership[]> {
  return m.findBy(Membership, { organizationId });
}
