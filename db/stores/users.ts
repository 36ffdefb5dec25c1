import { In, type EntityManager } from 'typeorm';
import { User } from '../entities/index.js';

/**
 * Users: through TypeORM's entity (its columns are the list). The request path reads a user with its
 * credential (the credential stores); what is here is sign-in by email, the operator's commands and names.
 */
export async function userExists(m: EntityManager, id: string): Promise<boolean> {
  return (await m.countBy(User, { id })) > 0;
}

export async function emailTaken(m: EntityManager, email: string): Promise<boolean> {
  return (await m.countBy(User, { email })) > 0;
}

export async function userByEmail(m: EntityManager, email: string): Promise<User | null> {
  return m.findOneBy(User, { email });
}

export async function insertUser(m: EntityManager, user: User): Promise<User> {
  const row = m.create(User, user);
  await m.insert(User, row);
  return row;
}

export async function setPasswordHash(m: EntityManager, id: string, passwordHash: string, updatedAt: string) {
  await m.update(User, { id }, { passwordHash, updatedAt });
}

/** The users of these ids (unknown ids are left out), oldest first. */
export async function usersByIds(m: EntityManager, ids: string[]): Promise<User[]> {
  if (!ids.length) return [];
  return m.find(User, { where: { id: In(ids) }, order: { createdAt: 'ASC', id: 'ASC' } });
}

/** Every user, oldest first (the operator's list). */
export async function allUsers(m: EntityManager): Promise<User[]> {
  return m.find(User, { order: { createdAt: 'ASC', id: 'ASC' } });
}
