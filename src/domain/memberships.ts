import type { EntityManager } from 'typeorm';
import { Membership, Organization, type OrgRole } from '../../db/entities/index.js';

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
