/** The scopes with their meaning (shown on the consent screen). */
export const SCOPE_DESCRIPTIONS = {
  'me:read': 'Read your own profile',
  'organizations:read': 'List the organizations you belong to',
  'rooms:read': 'List rooms and their members',
  'rooms:write': 'Create rooms, change room settings and add members',
  'messages:read': 'Read messages',
  'messages:write': 'Send messages',
  'tasks:read': 'Read tasks',
  'tasks:write': 'Create and update tasks',
  'records:read': 'Read meeting records',
  'records:write': 'Create and update meeting records and their approvals',
  'files:read': 'Read file metadata and download files',
  'files:write': 'Upload files',
  'webhooks:read': 'List webhooks and their delivery history',
  'webhooks:write': 'Create and update webhooks; redeliver',
  'events:read': 'Read the event log and the event catalog',
  'mcp:tools': 'Call tools on the remote MCP surface',
  'agent:invoke': 'Run an agent through a connector',
} as const;

export type Scope = keyof typeof SCOPE_DESCRIPTIONS;
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as Scope[];

/** Scopes never delegated to an agent run: a run's token cannot start runs of its own. */
export const NEVER_DELEGATED: ReadonlySet<string> = new Set<Scope>(['agent:invoke']);
