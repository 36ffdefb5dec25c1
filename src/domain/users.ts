import type { EntityManager } from 'typeorm';
import { Membership, Organization, User, type OrgRole } from '../../db/entities/index.js';
import { DomainError, notFound, validationError } from './errors.js';
import { hashPassword } from './hashing.js';
import { newId } from './ids.js';
import { iso } from './time.js';
import { revokeUserWebSessions } from './webSessions.js';

export interface CreateUserOptions {
  email: string;
  name: string;
  password: string;
  /** `hashPassword(password)` computed beforehand, for a caller creating many users with one password. */
  passwordHash?: string;
  locale?: string;
  organizationId?: string;
  role?: OrgRole;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function checkPassword(password: string): void {
  if (password.length < 8) throw validationError('Password must be at least 8 characters', { field: 'password' });
}

/**
 * Sets a user's password and ends every browser session of theirs: whoever signed in
 * with the old password is signed out at once. Returns how many sessions ended.
 */
export async function setUserPassword(
  m: EntityManager,
  now: Date,
  userId: string,
  password: string,
): Promise<{ sessionsEnded: number }> {
  checkPassword(password);
  if (!(await m.countBy(User, { id: userId }))) throw notFound('User');
  await m.update(User, { id: userId }, { passwordHash: await hashPassword(password), updatedAt: iso(now) });
  return { sessionsEnded: await revokeUserWebSessions(m, userId) };
}

export async function createUser(m: EntityManager, now: Date, o: CreateUserOptions): Promise<User> {
  const email = o.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw validationError('Invalid email', { field: 'email' });
  if (!o.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  checkPassword(o.password);
  if (await m.countBy(User, { email })) throw new DomainError('conflict', 'A user with this email exists');
  const user = m.create(User, {
    id: newId('usr', now.getTime()),
    email,
    name: o.name.trim(),
    passwordHash: o.passwordHash ?? (await hashPassword(o.password)),
    locale: o.locale ?? 'en',
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  await m.insert(User, user);
  if (o.organizationId) await addOrgMember(m, now, o.organizationId, user.id, o.role ?? 'member');
  return user;
}

export async function createOrganization(m: EntityManager, now: Date, name: string): Promise<Organization> {
  if (!name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  const org = m.create(Organization, {
    id: newId('org', now.getTime()),
    name: name.trim(),
    plan: 'default',
    createdAt: iso(now),
  });
  await m.insert(Organization, org);
  return org;
}

export async function addOrgMember(
  m: EntityManager,
  now: Date,
  organizationId: string,
  userId: string,
  role: OrgRole,
): Promise<void> {
  if (!(await m.countBy(Organization, { id: organizationId }))) throw notFound('Organization');
  if (!(await m.countBy(User, { id: userId }))) throw notFound('User');
  const existing = await m.findOneBy(Membership, { organizationId, userId });
  if (existing) {
    await m.update(Membership, { id: existing.id }, { role });
    return;
  }
  await m.insert(Membership, { id: newId('mem', now.getTime()), organizationId, userId, role, createdAt: iso(now) });
}

export async function findUserByEmail(m: EntityManager, email: string): Promise<User | null> {
  // no address holds a NUL, and PostgreSQL text refuses one: nobody, without asking the database
  if (email.includes('\0')) return null;
  return m.findOneBy(User, { email: email.trim().toLowerCase() });
}
