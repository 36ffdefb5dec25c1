import { randomBytes } from 'node:crypto';
import { hasUsers, lockForSeeding } from '../db/stores/seed.js';
import { createApiKey } from './domain/apiKeys.js';
import { createRoom } from './domain/rooms.js';
import { SCOPES } from './domain/scopes.js';
import type { Services } from './domain/services.js';
import { createOrganization, createUser } from './domain/users.js';

const SEED_LOCK = 7_264_202;

export interface DemoData {
  organizationId: string;
  userId: string;
  email: string;
  password: string;
  roomId: string;
  apiKey: string;
}

/** On an empty database, creates a demo organization, user, room and test-mode key. */
export async function seedDemoData(s: Services): Promise<DemoData | null> {
  if (await hasUsers(s.ds)) return null;
  const now = s.now();
  const password = randomBytes(12).toString('base64url');
  return s.ds.transaction(async (m) => {
    // processes starting together on one PostgreSQL: one seeds, the others then see its user
    await lockForSeeding(m, SEED_LOCK);
    if (await hasUsers(m)) return null;
    const org = await createOrganization(m, now, 'Demo Org');
    const email = 'demo@example.com';
    const user = await createUser(m, now, {
      email,
      name: 'Demo User',
      password,
      organizationId: org.id,
      role: 'owner',
    });
    const room = await createRoom(m, now, { name: 'General', createdById: user.id, organizationId: org.id });
    const scopes = SCOPES.filter((x) => x !== 'agent:invoke');
    const { token } = await createApiKey(m, now, {
      userId: user.id,
      organizationId: org.id,
      name: 'Demo key',
      scopes,
      mode: 'test',
    });
    return { organizationId: org.id, userId: user.id, email, password, roomId: room.id, apiKey: token };
  });
}
