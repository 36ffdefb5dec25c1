import { type Command, optional, required } from '../command.js';

// the connector module is loaded when a command runs, never at start
const connectors = () => import('../../agents/connectors.js');

/** Agent connectors: the operator registers, lists and (de)activates them. */
export const connectorCommands: Command[] = [
  {
    name: 'connector create',
    usage:
      'svc connector create --org ORG --name N --url URL --scopes a:b,c:d [--created-by USR]   (prints the signing secret once)',
    summary: 'register an agent connector (its signing secret is printed once)',
    options: {
      org: { type: 'string', description: 'the organization whose agent runs it receives (org_…)' },
      name: { type: 'string', description: 'a name to recognise it by' },
      url: { type: 'string', description: 'the https URL agent runs are sent to' },
      scopes: { type: 'string', description: 'the scopes its runs may use, comma-separated' },
      'created-by': { type: 'string', description: 'the user recorded as its creator (usr_…)' },
    },
    async run(a, { services: s }) {
      const { createConnector } = await connectors();
      const { connector, secret } = await createConnector(s, {
        organizationId: required(a, 'org'),
        name: required(a, 'name'),
        url: required(a, 'url'),
        scopes: required(a, 'scopes').split(','),
        createdById: optional(a, 'created-by') ?? null,
      });
      // the next two commands, printed ready to paste: a key that may start runs with every scope the connector may
      // be delegated (a run's token gets the key's scopes ∩ the connector's), and a run
      const keyScopes = ['agent:invoke', ...connector.scopes].join(',');
      return {
        id: connector.id,
        secret,
        agentKey: [
          'npx svc key create --user $USER_ID',
          `--org ${connector.organizationId} --name agent-runs --scopes ${keyScopes} --mode test --json`,
        ].join(' '),
        startRun: [
          'curl -X POST "$SVC_URL/v1/rooms/$ROOM/agent-runs" -H "Authorization: Bearer $AGENT_KEY"',
          `-H 'Content-Type: application/json'`,
          `-d '{"connectorId":"${connector.id}","input":{"text":"Book the venue"}}'`,
        ].join(' '),
      };
    },
  },
  {
    name: 'connector list',
    usage: 'svc connector list --org ORG',
    summary: "list an organization's agent connectors",
    options: { org: { type: 'string', description: 'the organization (org_…)' } },
    columns: ['id', 'name', 'url', 'scopes', 'active', 'createdAt'],
    async run(a, { services: s }) {
      const { listConnectors } = await connectors();
      const rows = await listConnectors(s.ds.manager, required(a, 'org'));
      return {
        data: rows.map((c) => ({
          id: c.id,
          name: c.name,
          url: c.url,
          scopes: c.scopes,
          active: c.active,
          createdAt: c.createdAt,
        })),
      };
    },
  },
  ...(['activate', 'deactivate'] as const).map((verb): Command => ({
    name: `connector ${verb}`,
    usage: `svc connector ${verb} --id ACN`,
    summary: verb === 'activate' ? 'send agent runs to a connector again' : 'stop sending agent runs to a connector',
    options: { id: { type: 'string', description: 'the connector (acn_…)' } },
    async run(a, { services: s }) {
      await (await connectors()).setConnectorActive(s, required(a, 'id'), verb === 'activate');
      return {};
    },
  })),
];
