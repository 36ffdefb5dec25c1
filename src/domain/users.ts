import type { EntityManager } from 'typeorm';
import type { Organization, OrgRole, User } from '../../db/entities/index.js';
import { insertMembership, membership, membershipsIn, setMembershipRole } from '../../db/stores/memberships.js';
import {
  allUsers,
  emailTaken,
  insertUser,
  setPasswordHash,
  userByEmail,
  userExists,
  usersByIds,
} from '../../db/stores/users.js';
import {
  insertOrganization,
  organizationById,
  organizationExists,
  organizationsWithMembers,
} from '../../db/stores/organizations.js';
import { DomainError, notFound, validationError } from './errors.js';
import { hashPassword } from './hashing.js';
import { newId } from './ids.js';
import { iso } from './time.js';
import { revokeUserWebSessions } from './webSessions.js';

export type { Organization, User } from '../../db/entities/index.js';

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
  if (!(await userExists(m, userId))) throw notFound('User');
  await setPasswordHash(m, userId, await hashPassword(password), iso(now));
  return { sessionsEnded: await revokeUserWebSessions(m, userId) };
}

export async function createUser(m: EntityManager, now: Date, o: CreateUserOptions): Promise<User> {
  const email = o.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw validationError('Invalid email', { field: 'email' });
  if (!o.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  checkPassword(o.password);
  if (await emailTaken(m, email)) throw new DomainError('conflict', 'A user with this email exists');
  const user = await insertUser(m, {
    id: newId('usr', now.getTime()),
    email,
    name: o.name.trim(),
    passwordHash: o.passwordHash ?? (await hashPassword(o.password)),
    locale: o.locale ?? 'en',
    createdAt: iso(now),
    updatedAt: iso(now),
  });
  if (o.organizationId) await addOrgMember(m, now, o.organizationId, user.id, o.role ?? 'member');
  return user;
}

export async function createOrganization(m: EntityManager, now: Date, name: string): Promise<Organization> {
  if (!name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  return insertOrganization(m, {
    id: newId('org', now.getTime()),
    name: name.trim(),
    plan: 'default',
    createdAt: iso(now),
  });
}

export async function addOrgMember(
  m: EntityManager,
  now: Date,
  organizationId: string,
  userId: string,
  role: OrgRole,
): Promise<void> {
  if (!(await organizationExists(m, organizationId))) throw notFound('Organization');
  if (!(await userExists(m, userId))) throw notFound('User');
  const existing = await membership(m, organizationId, userId);
  if (existing) {
    await setMembershipRole(m, existing.id, role);
    return;
  }
  await insertMembership(m, { id: newId('mem', now.getTime()), organizationId, userId, role, createdAt: iso(now) });
}

export async function findUserByEmail(m: EntityManager, email: string): Promise<User | null> {
  // no address holds a NUL, and PostgreSQL text refuses one: nobody, without asking the database
  if (email.includes('\0')) return null;
  return userByEmail(m, email.trim().toLowerCase());
}

/** A user as the operator's list shows it: never the password hash. */
export interface UserListing {
  id: string;
  email: string;
  name: string;
  locale: string;
  createdAt: string;
  /** The role in the organization listed, when the list is of one. */
  role?: OrgRole;
}

const listing = (u: User): UserListing => ({
  id: u.id,
  email: u.email,
  name: u.name,
  locale: u.locale,
  createdAt: u.createdAt,
});

/**
 * Every user, oldest first, or with `organizationId` the members of that organization with their role (an
 * unknown organization is not found): the operator's `svc user list`.
 */
export async function listUsersForOperator(m: EntityManager, organizationId?: string): Promise<UserListing[]> {
  if (!organizationId) return (await allUsers(m)).map(listing);
  if (!(await organizationById(m, organizationId))) throw notFound('Organization');
  const roles = new Map((await membershipsIn(m, organizationId)).map((x) => [x.userId, x.role]));
  return (await usersByIds(m, [...roles.keys()])).map((u) => ({ ...listing(u), role: roles.get(u.id)! }));
}

/** Every organization, oldest first, with its number of members: the operator's `svc org list`. */
export async function listOrganizationsForOperator(m: EntityManager): Promise<(Organization & { members: number })[]> {
  return organizationsWithMembers(m);
}
