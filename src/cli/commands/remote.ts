import { type Command, optional, required, UsageError } from '../command.js';
import { remoteTarget } from '../remote/apiClient.js';
import { TRIGGERABLE, trigger } from '../remote/trigger.js';

const remoteOptions = {
  url: {
    type: 'string' as const,
    description: "the server's base URL (default: SVC_URL, else BASE_URL, else http://localhost:3000)",
  },
  key: { type: 'string' as const, description: 'the API key to call it with (default: SVC_API_KEY)' },
};

const positiveInt = (raw: string | undefined, name: string, def?: number): number | undefined => {
  if (raw === undefined) return def;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new UsageError(`--${name} must be a positive whole number`);
  return Number(raw);
};

/**
 * Commands for a developer's laptop: they work against any server through the public API
 * (`--url BASE` or SVC_URL, `--key` or SVC_API_KEY), never on a database.
 */
export const remoteCommands: Command[] = [
  {
    name: 'listen',
    usage:
      'svc listen --forward-to URL [--room ROOM] [--events a.b,c.*] [--secret whsec_…] [--since ISO] [--interval-ms 1000] [--max-events N] [--url BASE] [--key KEY]   (key needs events:read; reconnects by itself; Ctrl-C stops)',
    summary: "forward a server's events, signed like webhook deliveries, to a local URL",
    options: {
      ...remoteOptions,
      'forward-to': {
        type: 'string',
        description: 'the local URL each event is POSTed to, e.g. http://localhost:4000/webhooks',
      },
      room: { type: 'string', description: 'only the events of this room (room_…)' },
      events: { type: 'string', description: 'only these event types, comma-separated; a.* matches a group' },
      secret: {
        type: 'string',
        description: 'the secret that signs forwarded events, at least 16 characters (default: a new one, printed)',
      },
      since: { type: 'string', description: 'forward events from this time on (ISO 8601; default: from now)' },
      'interval-ms': {
        type: 'string',
        description: 'milliseconds to wait before reconnecting when the connection is lost (default 1000)',
      },
      'max-events': { type: 'string', description: 'stop after forwarding this many events' },
    },
    async remote(a, positionals) {
      if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
      const { listen, parseForwardUrl } = await import('../remote/listen.js');
      const forwardTo = parseForwardUrl(optional(a, 'forward-to'));
      const since = optional(a, 'since');
      if (since !== undefined && Number.isNaN(new Date(since).getTime()))
        throw new UsageError('--since must be an ISO 8601 time');
      const secret = optional(a, 'secret');
      if (secret !== undefined && secret.length < 16) throw new UsageError('--secret must be at least 16 characters');
      const target = remoteTarget(a);
      const ac = new AbortController();
      const stop = () => ac.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // with --json, stdout gets exactly one object at the end; the lines for people go to stderr
      const out = (line: string) => (a.json ? process.stderr : process.stdout).write(`${line}\n`);
      try {
        const r = await listen({
          target,
          forwardTo,
          roomId: optional(a, 'room'),
          secret,
          since: since === undefined ? undefined : new Date(since).toISOString(),
          events: (optional(a, 'events') ?? '')
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean),
          intervalMs: positiveInt(optional(a, 'interval-ms'), 'interval-ms', 1000)!,
          maxEvents: positiveInt(optional(a, 'max-events'), 'max-events'),
          out,
          signal: ac.signal,
        });
        if (!a.json) return { forwarded: r.forwarded.length };
        return { secret: r.secret, forwarded: r.forwarded };
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    },
  },
  {
    name: 'trigger',
    usage: `svc trigger <event-type> --room ROOM [--user USR] [--url BASE] [--key KEY]   (event types: ${TRIGGERABLE.join(', ')})`,
    summary: 'make the server emit one event of a type, through the public API',
    options: {
      ...remoteOptions,
      room: { type: 'string', description: 'the room the event happens in (room_…)' },
      user: { type: 'string', description: 'for room.member.added: the user to add (usr_…)' },
    },
    async remote(a, positionals) {
      if (positionals.length > 1) throw new UsageError(`one event type, got ${positionals.length}`);
      const roomId = required(a, 'room');
      return trigger(remoteTarget(a), positionals[0], roomId, { userId: optional(a, 'user') });
    },
  },
];
