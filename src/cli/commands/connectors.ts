import { listConnectors, createConnector, setConnectorActive } from '../../agents/connectors.js';
import { type Command, optional, required } from '../command.js';

/** Agent connectors (issue 21): the operator registers, lists and (de)activates them. */
export const connectorCommands: Command[] = [
  {
    name: 'connector create',
    usage: 'svc connector create --org ORG --name N --url URL --scopes a:b,c:d [--created-by USR]   (prints the signing secret once)',
    options: { org: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' }, scopes: { type: 'string' }, 'created-by': { type: 'string' } },
    async run(a, { services: s }) {
      const { connector, secret } = await createConnector(s, {
        organizationId: required(a, 'org'), name: required(a, 'name'), url: required(a, 'url'),
        scopes: required(a, 'scopes').split(','), createdById: optional(a, 'created-by') ?? null,
      });
      return { id: connector.id, secret };
    },
  },
  {
    name: 'connector list',
    usage: 'svc connector list --org ORG',
    options: { org: { type: 'string' } },
    async run(a, { services: s }) {
      const rows = await listConnectors(s.ds.manager, required(a, 'org'));
      return { data: rows.map((c) => ({ id: c.id, name: c.name, url: c.url, scopes: c.scopes, active: c.active, createdAt: c.createdAt })) };
    },
  },
  ...(['activate', 'deactivate'] as const).map((verb): Command => ({
    name: `connector ${verb}`,
    usage: `svc connector ${verb} --id ACN`,
    options: { id: { type: 'string' } },
    async run(a, { services: s }) {
      await setConnectorActive(s, required(a, 'id'), verb === 'activate');
      return {};
    },
  })),
];
