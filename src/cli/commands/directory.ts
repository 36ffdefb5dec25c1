import type { EntityManager } from 'typeorm';
import type { Runtime } from '../../runtime.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

// A command loads the domain and the database layer when it runs, never at start: `svc help` loads neither.
const users = () => import('../../domain/users.js');
const rooms = () => import('../../domain/rooms.js');

/** Runs `work` in one transaction of the runtime's database. */
async function inTransaction<T>(rt: Runtime, work: (m: EntityManager) => Promise<T>): Promise<T> {
  return (await import('../../domain/transaction.js')).inTransaction(rt.services, work);
}

const ROLES = ['owner', 'admin', 'member'] as const;

/** The list commands of the directory: what an operator needs to find an id again, never a secret. */
const directoryLists: Command[] = [
  {
    name: 'org list',
    usage: 'svc org list',
    summary: 'list every organization with its number of members',
    options: {},
    columns: ['id', 'name', 'members', 'plan', 'createdAt'],
    async run(_a, rt) {
      const { listOrganizationsForOperator } = await users();
      const orgs = await listOrganizationsForOperator(rt.services.ds.manager);
      return {
        data: orgs.map((o) => ({
          id: o.id,
          name: o.name,
          plan: o.plan,
          members: o.members,
          createdAt: o.createdAt,
        })),
      };
    },
  },
  {
    name: 'user list',
    usage: 'svc user list [--org ORG]',
    summary: 'list users (with --org: the members of an organization and their roles)',
    options: { org: { type: 'string', description: 'only the members of this organization (org_…), with their role' } },
    columns: ['id', 'email', 'name', 'role', 'createdAt'],
    async run(a, rt) {
      const { listUsersForOperator } = await users();
      return { data: await listUsersForOperator(rt.services.ds.manager, optional(a, 'org')) };
    },
  },
  {
    name: 'room list',
    usage: 'svc room list --org ORG',
    summary: "list an organization's rooms with their number of members",
    options: { org: { type: 'string', description: 'the organization (org_…)' } },
    columns: ['id', 'name', 'type', 'members', 'createdById', 'createdAt'],
    async run(a, rt) {
      const { listRoomsForOperator } = await rooms();
      return { data: await listRoomsForOperator(rt.services.ds.manager, required(a, 'org')) };
    },
  },
  {
    name: 'key list',
    usage: 'svc key list --user USR|--org ORG',
    summary: 'list API keys of a user or an organization (never the token: its prefix and last four characters)',
    options: {
      user: { type: 'string', description: 'the keys that act for this user (usr_…)' },
      org: { type: 'string', description: 'the keys installed for this organization (org_…)' },
    },
    columns: ['id', 'name', 'prefix', 'last4', 'scopes', 'userId', 'organizationId', 'revokedAt'],
    async run(a, rt) {
      const userId = optional(a, 'user');
      const organizationId = optional(a, 'org');
      if (!userId && !organizationId) throw new UsageError('give --user or --org');
      const { listApiKeysFor } = await import('../../domain/apiKeys.js');
      const keys = await listApiKeysFor(rt.services.ds.manager, { userId, organizationId });
      return {
        data: keys.map((k) => ({
          id: k.id,
          name: k.name,
          userId: k.userId,
          organizationId: k.organizationId,
          mode: k.mode,
          scopes: k.scopes,
          prefix: k.prefix,
          last4: k.last4,
          createdAt: k.createdAt,
          lastUsedAt: k.lastUsedAt,
          revokedAt: k.revokedAt,
        })),
      };
    },
  },
];

/** Organizations, users, rooms, members and API keys. */
const directoryActions: Command[] = [
  {
    name: 'org create',
    usage: 'svc org create --name N',
    summary: 'create an organization',
    options: { name: { type: 'string', description: "the organization's name" } },
    async run(a, rt) {
      const { createOrganization } = await users();
      const org = await inTransaction(rt, (m) => createOrganization(m, rt.services.now(), required(a, 'name')));
      return { id: org.id };
    },
  },
  {
    name: 'org add-member',
    usage: 'svc org add-member --org ORG --user USR [--role owner|admin|member]',
    summary: 'add a user to an organization',
    options: {
      org: { type: 'string', description: 'the organization (org_…)' },
      user: { type: 'string', description: 'the user to add (usr_…)' },
      role: { type: 'string', description: 'their role: owner, admin or member (default member)' },
    },
    async run(a, rt) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role') ?? 'member';
      const { addOrgMember } = await users();
      await inTransaction(rt, (m) => addOrgMember(m, rt.services.now(), required(a, 'org'), required(a, 'user'), role));
      return {};
    },
  },
  {
    name: 'user create',
    usage: 'svc user create --email E --name N --password P [--org ORG] [--role owner|admin|member] [--locale L]',
    summary: 'create a user who signs in with email and password',
    options: {
      email: { type: 'string', description: 'the email address the user signs in with' },
      name: { type: 'string', description: 'the name shown to others' },
      password: { type: 'string', description: 'the password the user signs in with' },
      org: { type: 'string', description: 'an organization to add the user to (org_…)' },
      role: { type: 'string', description: 'their role in --org: owner, admin or member (default member)' },
      locale: { type: 'string', description: 'the preferred language of messages, e.g. en or ja' },
    },
    async run(a, rt) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role');
      const org = optional(a, 'org');
      if (role && !org) throw new UsageError('--role needs --org');
      const { createUser } = await users();
      const user = await inTransaction(rt, (m) =>
        createUser(m, rt.services.now(), {
          email: required(a, 'email'),
          name: required(a, 'name'),
          password: required(a, 'password'),
          locale: optional(a, 'locale'),
          organizationId: org,
          role,
        }),
      );
      return { id: user.id };
    },
  },
  {
    name: 'user set-password',
    usage: 'svc user set-password --user USR --password P   (ends every browser session of the user)',
    summary: "set a user's password and end every browser session of theirs",
    options: {
      user: { type: 'string', description: 'the user (usr_…)' },
      password: { type: 'string', description: 'the new password' },
    },
    async run(a, rt) {
      const { setUserPassword } = await users();
      return inTransaction(rt, (m) =>
        setUserPassword(m, rt.services.now(), required(a, 'user'), required(a, 'password')),
      );
    },
  },
  {
    name: 'room create',
    usage: 'svc room create --name N --created-by USR [--org ORG] [--type 0|1] [--member USR]...',
    summary: 'create a room (its creator is a member)',
    options: {
      name: { type: 'string', description: "the room's name" },
      'created-by': { type: 'string', description: 'the user who creates it and becomes its first member (usr_…)' },
      org: { type: 'string', description: 'the organization it belongs to (org_…)' },
      type: { type: 'string', description: '0 for an ordinary room (default), 1 for a direct-message room' },
      member: { type: 'string', multiple: true, description: 'another member (usr_…); repeat for more' },
    },
    async run(a, rt) {
      const type = oneOf(optional(a, 'type'), ['0', '1'] as const, 'type') ?? '0';
      const { createRoom } = await rooms();
      const room = await inTransaction(rt, (m) =>
        createRoom(m, rt.services.now(), {
          name: required(a, 'name'),
          createdById: required(a, 'created-by'),
          organizationId: optional(a, 'org') ?? null,
          roomType: Number(type),
          memberIds: (a.member as string[] | undefined) ?? [],
        }),
      );
      return { id: room.id };
    },
  },
  {
    name: 'room add-member',
    usage: 'svc room add-member --room ROOM --user USR',
    summary: 'add a user to a room',
    options: {
      room: { type: 'string', description: 'the room (room_…)' },
      user: { type: 'string', description: 'the user to add (usr_…)' },
    },
    async run(a, rt) {
      const { addMemberAsOperator } = await rooms();
      await inTransaction(rt, (m) =>
        addMemberAsOperator(m, rt.services.now(), required(a, 'room'), required(a, 'user')),
      );
      return {};
    },
  },
  {
    name: 'key create',
    usage: 'svc key create --user USR [--org ORG] --name N --scopes a:b,c:d --mode live|test',
    summary: 'issue an API key (its token is printed once)',
    options: {
      user: { type: 'string', description: 'the user the key acts for (usr_…)' },
      org: { type: 'string', description: "the organization it is installed for (default: the user's personal scope)" },
      name: { type: 'string', description: 'a name to recognise it by' },
      scopes: { type: 'string', description: 'what it may do, comma-separated, e.g. me:read,rooms:read' },
      mode: { type: 'string', description: 'live, or test for a key whose token starts svc_test_' },
    },
    async run(a, rt) {
      const mode = oneOf(required(a, 'mode'), ['live', 'test'] as const, 'mode')!;
      const scopes = required(a, 'scopes')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      const { createApiKey } = await import('../../domain/apiKeys.js');
      const { key, token } = await inTransaction(rt, (m) =>
        createApiKey(m, rt.services.now(), {
          userId: required(a, 'user'),
          organizationId: optional(a, 'org') ?? null,
          name: required(a, 'name'),
          scopes,
          mode,
        }),
      );
      return { id: key.id, token, prefix: key.prefix, last4: key.last4 };
    },
  },
  {
    name: 'key revoke',
    usage: 'svc key revoke --id KEY',
    summary: 'revoke an API key at once',
    options: { id: { type: 'string', description: "the key's id, as key create printed it" } },
    async run(a, rt) {
      const { revokeApiKey } = await import('../../domain/apiKeys.js');
      await inTransaction(rt, (m) => revokeApiKey(m, rt.services.now(), required(a, 'id')));
      return {};
    },
  },
];

/** Every directory command, each group's together in the order of its first (`org create`, `org list`, …). */
export const directoryCommands: Command[] = groupedInOrder([...directoryActions, ...directoryLists]);

function groupedInOrder(list: Command[]): Command[] {
  const group = (c: Command) => c.name.split(' ')[0];
  const first = [...new Set(list.map(group))];
  return [...list].sort((x, y) => first.indexOf(group(x)) - first.indexOf(group(y)));
}
