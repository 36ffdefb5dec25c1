import type { EntityManager } from 'typeorm';
import type { Room, User } from '../../db/entities/index.js';
import { roomById, roomsCreatedOrAdministered, webhookById } from '../../db/stores/developerAccess.js';

// What the developer settings pages (src/web/developer/) read to act as the signed-in user in a room's context.

/** The organization of a room (null: a personal room), or undefined when there is no such room. */
export const roomOrganizationId = async (m: EntityManager, roomId: string): Promise<string | null | undefined> => {
  const room = await roomById(m, roomId);
  return room ? room.organizationId : undefined;
};

/** The room of a webhook, or undefined when there is no such webhook. */
export const webhookRoomId = async (m: EntityManager, webhookId: string): Promise<string | undefined> =>
  (await webhookById(m, webhookId))?.roomId;

/**
 * The ordinary rooms whose webhooks the user may manage, as candidates: those they created and those of the
 * organizations they own or administer (`adminOrgIds`), by id. The caller checks each with `requireRoom`.
 */
export const webhookRoomCandidates = (m: EntityManager, userId: string, adminOrgIds: string[]): Promise<Room[]> =>
  roomsCreatedOrAdministered(m, userId, adminOrgIds);

export type { Room, User };
