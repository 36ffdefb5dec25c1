import { createApiKey, revokeApiKey } from '../../domain/apiKeys.js';
import { addMemberAsOperator, createRoom } from '../../domain/rooms.js';
import { addOrgMember, createOrganization, createUser, setUserPassword } from '../../domain/users.js';
import { inTransaction } from '../../../db/transaction.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

const ROLES = ['owner', 'admin', 'member'] as const;

/** Organizations, users, rooms, members and API keys. */
export const directoryCommands: Command[] = [
  {
    name: 'org create',
    usage: 'svc org create --name N',
    summary: 'create an organization',
    options: { name: { type: 'string', description: "the organization's name" } },
    async run(a, { services: s }) {
      const org = await inTransaction(s, (m) => createOrganization(m, s.now(), required(a, 'name')));
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
    async run(a, { services: s }) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role') ?? 'member';
      await inTransaction(s, (m) => addOrgMember(m, s.now(), required(a, 'org'), required(a, 'user'), role));
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
    async run(a, { services: s }) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role');
      const org = optional(a, 'org');
      if (role && !org) throw new UsageError('--role needs --org');
      const user = await inTransaction(s, (m) =>
        createUser(m, s.now(), {
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
    async run(a, { services: s }) {
      return inTransaction(s, (m) => setUserPassword(m, s.now(), required(a, 'user'), required(a, 'password')));
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
    async run(a, { services: s }) {
      const type = oneOf(optional(a, 'type'), ['0', '1'] as const, 'type') ?? '0';
      const room = await inTransaction(s, (m) =>
        createRoom(m, s.now(), {
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
    async run(a, { services: s }) {
      await inTransaction(s, (m) => addMemberAsOperator(m, s.now(), required(a, 'room'), required(a, 'user')));
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
    async run(a, { services: s }) {
      const mode = oneOf(required(a, 'mode'), ['live', 'test'] as const, 'mode')!;
      const scopes = required(a, 'scopes')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      const { key, token } = await inTransaction(s, (m) =>
        createApiKey(m, s.now(), {
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
    async run(a, { services: s }) {
      await inTransaction(s, (m) => revokeApiKey(m, s.now(), required(a, 'id')));
      return {};
    },
  },
];
