import type { EntityManager } from 'typeorm';
import { Room, Webhook } from '../entities/index.js';

// What the developer settings pages read of rooms and webhooks to act as the signed-in user in the right
// context: a room's organization, a webhook's room, the rooms whose webhooks the user may manage. TypeORM's
// entity manager and query builder.

export const roomById = (m: EntityManager, id: string): Promise<Room | null> => m.findOneBy(Room, { id });

export const webhookById = (m: EntityManager, id: string): Promise<Webhook | null> => m.findOneBy(Webhook, { id });

/** Ordinary rooms the user created, or of the organizations in `adminOrgIds`, by id. */
export function roomsCreatedOrAdministered(m: EntityManager, userId: string, adminOrgIds: string[]): Promise<Room[]> {
  const qb = m.getRepository(Room).createQueryBuilder('r').where('r.roomType = 0');
  if (adminOrgIds.length)
    qb.andWhere('(r.createdById = :uid OR r.organizationId IN (:...orgs))', { uid: userId, orgs: adminOrgIds });
  else qb.andWhere('r.createdById = :uid', { uid: userId });
  return qb.orderBy('r.id', 'ASC').getMany();
}
