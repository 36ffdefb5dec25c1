import { createClient } from '../../oauth/clientRegistry.js';
import { inTransaction } from '../../procedures/tx.js';
import { type Command, oneOf, optional, required, UsageError } from '../command.js';

/** OAuth clients: registered only by an administrator (spec 5.6, CONTRACT §2). */
export const clientCommands: Command[] = [
  {
    name: 'client create',
    usage: 'svc client create --name N --redirect-uri URI [--redirect-uri URI]... --type public|confidential [--kind app|agent] [--scopes a:b,...]',
    options: {
      name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, type: { type: 'string' },
      kind: { type: 'string' }, scopes: { type: 'string' },
    },
    async run(a, { services: s }) {
      const type = oneOf(required(a, 'type'), ['public', 'confidential'] as const, 'type')!;
      const kind = oneOf(optional(a, 'kind'), ['app', 'agent'] as const, 'kind') ?? 'app';
      const scopes = optional(a, 'scopes')?.split(',').map((x) => x.trim()).filter(Boolean);
      const redirectUris = (a['redirect-uri'] as string[] | undefined) ?? [];
      if (!redirectUris.length) throw new UsageError('--redirect-uri is required');
      const { client, clientSecret } = await inTransaction(s, (m) =>
        createClient(m, s.now(), { name: required(a, 'name'), redirectUris, type, kind, scopes }),
      );
      return { clientId: client.id, clientSecret };
    },
  },
];
