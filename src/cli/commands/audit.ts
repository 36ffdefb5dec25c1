import { type Command, oneOf, optional, UsageError } from '../command.js';

const isoOrThrow = (v: string | undefined, name: string) => {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time`);
  return d;
};

export const auditCommands: Command[] = [
  {
    name: 'audit list',
    usage: 'svc audit list [--since ISO] [--actor user|app|agent] [--run RUN] [--limit N]',
    summary: 'list audit log rows, newest first',
    options: {
      since: { type: 'string', description: 'only rows from this time on (ISO 8601)' },
      actor: { type: 'string', description: 'only requests made as user, app or agent' },
      run: { type: 'string', description: 'only the requests of this agent run' },
      limit: { type: 'string', description: 'at most this many rows (default 100, at most 10000)' },
    },
    columns: ['createdAt', 'surface', 'method', 'routePattern', 'statusCode', 'actor', 'userId', 'units'],
    async run(a, { services: s }) {
      const limitRaw = optional(a, 'limit');
      if (limitRaw !== undefined && !/^\d+$/.test(limitRaw)) throw new UsageError('--limit must be a positive integer');
      const { listAudit } = await import('../../auth/audit.js');
      const rows = await listAudit(s, {
        since: isoOrThrow(optional(a, 'since'), 'since')?.toISOString(),
        actor: oneOf(optional(a, 'actor'), ['user', 'app', 'agent'] as const, 'actor'),
        limit: limitRaw ? Math.min(Number(limitRaw), 10_000) : undefined,
        agentRunId: optional(a, 'run'),
      });
      return {
        data: rows.map((r) => ({
          requestId: r.requestId,
          surface: r.surface,
          method: r.method,
          routePattern: r.routePattern,
          statusCode: r.statusCode,
          authMethod: r.authMethod,
          actor: r.actor,
          delegatingUserId: r.delegatingUserId,
          scopes: r.scopes,
          organizationId: r.organizationId,
          userId: r.userId,
          apiKeyId: r.apiKeyId,
          tokenId: r.tokenId,
          units: r.units,
          createdAt: r.createdAt,
        })),
      };
    },
  },
  {
    name: 'audit purge',
    usage: 'svc audit purge [--before ISO]   (default: rows older than 7 years)',
    summary: 'delete old audit log rows',
    options: {
      before: { type: 'string', description: 'delete rows older than this time (ISO 8601; default: 7 years ago)' },
    },
    async run(a, { services: s }) {
      const { purgeAudit } = await import('../../auth/audit.js');
      return { deleted: await purgeAudit(s, isoOrThrow(optional(a, 'before'), 'before')) };
    },
  },
];
