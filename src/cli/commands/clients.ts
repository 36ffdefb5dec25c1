import { type Command, oneOf, optional, required, UsageError } from '../command.js';

// The OAuth modules are loaded when a command runs, never at start (`svc help` loads none of them).
const approvals = () => import('../../oauth/clientApprovals.js');

/** OAuth clients: registered only by an administrator. */
export const clientCommands: Command[] = [
  {
    name: 'client create',
    usage:
      'svc client create --name N --redirect-uri URI [--redirect-uri URI]... --type public|confidential [--kind app|agent] [--scopes a:b,...]',
    summary: 'register an OAuth client (a confidential one gets a secret, printed once)',
    options: {
      name: { type: 'string', description: 'the name users see on the consent page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        description: 'a URI it may redirect to after sign-in; repeat for more',
      },
      type: { type: 'string', description: 'public (no secret: PKCE only) or confidential (with a client secret)' },
      kind: {
        type: 'string',
        description: 'app (default), or agent for an LLM/MCP agent whose tokens act as actor=agent',
      },
      scopes: { type: 'string', description: 'the scopes it may ask for, comma-separated (default: all)' },
    },
    async run(a, rt) {
      const type = oneOf(required(a, 'type'), ['public', 'confidential'] as const, 'type')!;
      const kind = oneOf(optional(a, 'kind'), ['app', 'agent'] as const, 'kind') ?? 'app';
      const scopes = optional(a, 'scopes')
        ?.split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      const redirectUris = (a['redirect-uri'] as string[] | undefined) ?? [];
      if (!redirectUris.length) throw new UsageError('--redirect-uri is required');
      const { registerClient } = await import('../../oauth/clientRegistry.js');
      const { client, clientSecret } = await registerClient(rt.services, {
        name: required(a, 'name'),
        redirectUris,
        type,
        kind,
        scopes,
      });
      return { clientId: client.id, clientSecret };
    },
  },
  {
    name: 'client list',
    usage: 'svc client list',
    summary: 'list the registered OAuth clients (never a client secret)',
    options: {},
    columns: ['clientId', 'name', 'type', 'kind', 'redirectUris', 'createdAt'],
    async run(_a, rt) {
      const { listClients } = await import('../../oauth/clientRegistry.js');
      const rows = await listClients(rt.services);
      return {
        data: rows.map((c) => ({
          clientId: c.id,
          name: c.name,
          type: c.type,
          kind: c.kind,
          redirectUris: c.redirectUris,
          scopes: c.scopes,
          createdAt: c.createdAt,
        })),
      };
    },
  },
  {
    // Client ID Metadata Document clients: approved once, server-wide or for one organization
    name: 'client allow',
    usage: 'svc client allow --url https://app.example/oauth/client.json|https://app.example [--org ORG]',
    summary: "approve an MCP client's metadata document URL, or every one under an origin",
    options: {
      url: {
        type: 'string',
        description: 'the client metadata document URL, or an origin to approve every document under it',
      },
      org: { type: 'string', description: 'approve it for this organization only (default: the whole server)' },
    },
    async run(a, rt) {
      const organizationId = optional(a, 'org') ?? null;
      const { allowClient } = await approvals();
      const { approval, created } = await allowClient(rt.services, { pattern: required(a, 'url'), organizationId });
      return { id: approval.id, url: approval.pattern, organizationId: approval.organizationId, created };
    },
  },
  {
    name: 'client disallow',
    usage: 'svc client disallow --url URL|ORIGIN [--org ORG]',
    summary: 'withdraw an approval made with client allow',
    options: {
      url: { type: 'string', description: 'the URL or origin as approved' },
      org: { type: 'string', description: 'the organization it was approved for (default: the server-wide approval)' },
    },
    async run(a, rt) {
      const organizationId = optional(a, 'org') ?? null;
      const { normalizeApprovalPattern, disallowClient } = await approvals();
      const removed = await disallowClient(rt.services, { pattern: required(a, 'url'), organizationId });
      return { url: normalizeApprovalPattern(required(a, 'url')), organizationId, removed };
    },
  },
  {
    name: 'client approvals',
    usage: 'svc client approvals --url URL',
    summary: 'list the approvals of a client metadata document URL',
    options: { url: { type: 'string', description: 'the client metadata document URL or origin' } },
    async run(a, rt) {
      const url = required(a, 'url');
      const { approvalsFor, normalizeApprovalPattern } = await approvals();
      const rows = await approvalsFor(rt.services.ds.manager, normalizeApprovalPattern(url));
      return {
        url,
        approvals: rows.map((r) => ({
          id: r.id,
          pattern: r.pattern,
          organizationId: r.organizationId,
          createdAt: r.createdAt,
        })),
      };
    },
  },
];
