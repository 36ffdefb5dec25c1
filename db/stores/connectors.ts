import { In, type EntityManager } from 'typeorm';
import { AgentConnector } from '../entities/index.js';
import { type KeysetBounds, keysetEntities } from './paging.js';

// The `agent_connectors` table: an organization's registered agent endpoints with their sealed secrets. TypeORM
// throughout (entity rows with their JSON scopes); nothing here is on a hot path.

export const findConnector = (m: EntityManager, id: string): Promise<AgentConnector | null> =>
  m.findOneBy(AgentConnector, { id });

export async function insertConnector(m: EntityManager, row: AgentConnector): Promise<void> {
  await m.insert(AgentConnector, row);
}

export async function setConnectorActiveRow(m: EntityManager, id: string, active: boolean, now: string): Promise<void> {
  await m.update(AgentConnector, { id }, { active, updatedAt: now });
}

/** An organization's connectors, oldest first. */
export const connectorsOfOrganization = (m: EntityManager, organizationId: string): Promise<AgentConnector[]> =>
  m.find(AgentConnector, { where: { organizationId }, order: { id: 'ASC' } });

/** A keyset page of an organization's connectors; none for `organizationId` null (the individual context). */
export function connectorsPage(
  m: EntityManager,
  organizationId: string | null,
  b: KeysetBounds,
): Promise<AgentConnector[]> {
  const qb = m
    .getRepository(AgentConnector)
    .createQueryBuilder('x')
    .where('x.organizationId = :org', { org: organizationId ?? '' });
  if (organizationId === null) qb.andWhere('1 = 0');
  return keysetEntities(qb, 'x.id', b);
}

/** The id and name of each connector given by id (unknown ids are left out). */
export const connectorNameRows = (m: EntityManager, ids: string[]): Promise<Pick<AgentConnector, 'id' | 'name'>[]> =>
  m.find(AgentConnector, { select: { id: true, name: true }, where: { id: In(ids) } });
