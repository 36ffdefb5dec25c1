import type { EntityManager } from 'typeorm';
import { Organization } from '../entities/index.js';
import { countPer } from './rooms.js';

/** Organizations: through TypeORM's entity (its columns are the list), written and listed by operators. */
export async function organizationExists(m: EntityManager, id: string): Promise<boolean> {
  return (await m.countBy(Organization, { id })) > 0;
}

export async function organizationById(m: EntityManager, id: string): Promise<Organization | null> {
  return m.findOneBy(Organization, { id });
}

export async function insertOrganization(m: EntityManager, org: Organization): Promise<Organization> {
  const row = m.create(Organization, org);
  await m.insert(Organization, row);
  return row;
}

/** Every organization, oldest first, with its number of members (the operator's list). */
export async function organizationsWithMembers(m: EntityManager): Promise<(Organization & { members: number })[]> {
  const orgs = await m.find(Organization, { order: { createdAt: 'ASC', id: 'ASC' } });
  const counts = await countPer(
    m,
    'Membership',
    'organizationId',
    orgs.map((o) => o.id),
  );
  return orgs.map((o) => Object.assign(o, { members: counts.get(o.id) ?? 0 }));
}
