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
    options: { name: { type: 'string' } },
    async run(a, { services: s }) {
      const org = await inTransaction(s, (m) => createOrganization(m, s.now(), required(a, 'name')));
      return { id: org.id };
    },
  },
  {
    name: 'org add-member',
    usage: 'svc org add-member --org ORG --user USR [--role owner|admin|member]',
    options: { org: { type: 'string' }, user: { type: 'string' }, role: { type: 'string' } },
    async run(a, { services: s }) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role') ?? 'member';
      await inTransaction(s, (m) => addOrgMember(m, s.now(), required(a, 'org'), required(a, 'user'), role));
      return {};
    },
  },
  {
    name: 'user create',
    usage: 'svc user create --email E --name N --password P [--org ORG] [--role owner|admin|member] [--locale L]',
    options: {
      email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, org: { type: 'string' },
      role: { type: 'string' }, locale: { type: 'string' },
    },
    async run(a, { services: s }) {
      const role = oneOf(optional(a, 'role'), ROLES, 'role');
      const org = optional(a, 'org');
      if (role && !org) throw new UsageError('--role needs --org');
      const user = await inTransaction(s, (m) =>
        createUser(m, s.now(), {
          email: required(a, 'email'), name: required(a, 'name'), password: required(a, 'password'),
          locale: optional(a, 'locale'), organizationId: org, role,
        }),
      );
      return { id: user.id };
    },
  },
  {
    name: 'user set-password',
    usage: 'svc user set-password --user USR --password P   (ends every browser session of the user)',
    options: { user: { type: 'string' }, password: { type: 'string' } },
    async run(a, { services: s }) {
      return inTransaction(s, (m) => setUserPassword(m, s.now(), required(a, 'user'), required(a, 'password')));
    },
  },
  {
    name: 'room create',
    usage: 'svc room create --name N --created-by USR [--org ORG] [--type 0|1] [--member USR]...',
    options: {
      name: { type: 'string' }, 'created-by': { type: 'string' }, org: { type: 'string' }, type: { type: 'string' },
      member: { type: 'string', multiple: true },
    },
    async run(a, { services: s }) {
      const type = oneOf(optional(a, 'type'), ['0', '1'] as const, 'type') ?? '0';
      const room = await inTransaction(s, (m) =>
        createRoom(m, s.now(), {
          name: required(a, 'name'), createdById: required(a, 'created-by'), organizationId: optional(a, 'org') ?? null,
          roomType: Number(type), memberIds: (a.member as string[] | undefined) ?? [],
        }),
      );
      return { id: room.id };
    },
  },
  {
    name: 'room add-member',
    usage: 'svc room add-member --room ROOM --user USR',
    options: { room: { type: 'string' }, user: { type: 'string' } },
    async run(a, { services: s }) {
      await inTransaction(s, (m) => addMemberAsOperator(m, s.now(), required(a, 'room'), required(a, 'user')));
      return {};
    },
  },
  {
    name: 'key create',
    usage: 'svc key create --user USR [--org ORG] --name N --scopes a:b,c:d --mode live|test',
    options: { user: { type: 'string' }, org: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, mode: { type: 'string' } },
    async run(a, { services: s }) {
      const mode = oneOf(required(a, 'mode'), ['live', 'test'] as const, 'mode')!;
      const scopes = required(a, 'scopes').split(',').map((x) => x.trim()).filter(Boolean);
      const { key, token } = await inTransaction(s, (m) =>
        createApiKey(m, s.now(), { userId: required(a, 'user'), organizationId: optional(a, 'org') ?? null, name: required(a, 'name'), scopes, mode }),
      );
      return { id: key.id, token, prefix: key.prefix, last4: key.last4 };
    },
  },
  {
    name: 'key revoke',
    usage: 'svc key revoke --id KEY',
    options: { id: { type: 'string' } },
    async run(a, { services: s }) {
      await inTransaction(s, (m) => revokeApiKey(m, s.now(), required(a, 'id')));
      return {};
    },
  },
];
