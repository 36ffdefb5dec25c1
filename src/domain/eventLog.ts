import type { EntityManager } from 'typeorm';
import { EventRow } from '../../db/entities/index.js';
import type { Actor } from './actor.js';
import { keysetPage, type PageInput } from './paging.js';
import { ROOMS_OF_USER } from './rooms.js';

/**
 * The event log as the actor may read it: events of ordinary rooms the actor can read, in order.
 * Organization owners/admins see every room of their organization, others the rooms they belong to.
 */
export async function listEvents(m: EntityManager, actor: Actor, page: PageInput & { type?: string; roomId?: string; since?: string }, secret: string) {
  const qb = m.getRepository(EventRow).createQueryBuilder('e')
    .innerJoin('rooms', 'r', 'r."id" = e."roomId" AND r."roomType" = 0');
  if (actor.organizationId) {
    qb.innerJoin('memberships', 'ms', 'ms."organizationId" = r."organizationId" AND ms."userId" = :uid', { uid: actor.userId })
      .where('r."organizationId" = :org', { org: actor.organizationId })
      .andWhere(`(ms."role" IN ('owner','admin') OR r."id" IN (${ROOMS_OF_USER}))`);
  } else {
    qb.where('r."organizationId" IS NULL').andWhere(`r."id" IN (${ROOMS_OF_USER})`, { uid: actor.userId });
  }
  if (page.type) qb.andWhere('e.type = :type', { type: page.type });
  if (page.roomId) qb.andWhere('e.roomId = :roomId', { roomId: page.roomId });
  // createdAt is fixed-width ISO 8601 UTC text, so it compares as time; `since` comes normalized the same way
  if (page.since) qb.andWhere('e.createdAt >= :since', { since: page.since });
  return keysetPage(qb, 'e.seq', (e) => e.seq, page, secret);
}
