import type { Actor } from './actor.js';
import { DomainError } from './errors.js';
import type { LoggedEvent } from './eventLog.js';
import { idFloorAt } from './ids.js';
import type { Services } from './services.js';
import { streamLeases } from './streamLeases.js';

/**
 * How far before the event a resumed stream starts: an event's `seq` comes from its writer's clock when the
 * request began, so an event committed late can sort before one already served; the stream serves these seconds
 * again and the client skips what it has by id.
 */
export const RESUME_OVERLAP_MS = 5_000;
/** How far back a stream's `since` may reach: older history is paged with `GET /v1/events`. */
export const STREAM_SINCE_MAX_MS = 60 * 60_000;
/** A stream's lease is renewed this often and lives three times as long (a dead process frees its slots). */
export const STREAM_LEASE_RENEW_MS = 10_000;
export const STREAM_LEASE_TTL_MS = 3 * STREAM_LEASE_RENEW_MS;

/** An authorized event stream: its filter, where it starts, and the lease that counts it against the cap. */
export interface EventStreamStart {
  roomId?: string;
  type?: string;
  /** Events with a greater `seq` are served (the stream starts there). */
  afterSeq: string;
  /** The stream's lease (`streamLeases`); the adapter renews it while the stream is open and drops it at the end. */
  leaseId: string;
  /** The lease's key: the credential (`method:id`). */
  credential: string;
}

const CAP_NAMES = { credential: 'a credential', user: 'a person', organization: 'an organization' } as const;

/** The lease key of a credential: one cap counts its event streams and its MCP subscriptions together. */
export const streamCredential = (actor: Actor) => `${actor.credential.method}:${actor.credential.id}`;

/**
 * Opens an event stream for an authorized caller: takes a slot under the per-credential cap (across processes,
 * shared with MCP subscriptions), or refuses with 429 `rate_limited`, and says where the stream starts: after
 * `after`'s time less the overlap, at `since`, or now.
 */
export async function openEventStream(
  services: Services,
  actor: Actor,
  o: { roomId?: string; type?: string; after: LoggedEvent | null; since?: number },
): Promise<EventStreamStart> {
  const credential = streamCredential(actor);
  const { config } = services;
  const lease = await streamLeases(services, STREAM_LEASE_TTL_MS).take(
    { credential, userId: actor.userId, organizationId: actor.organizationId },
    {
      credential: config.mcpMaxStreams,
      user: config.mcpMaxStreamsPerUser,
      organization: config.mcpMaxStreamsPerOrganization,
    },
  );
  if ('refused' in lease)
    throw new DomainError(
      'rate_limited',
      `Stream limit reached: ${lease.max} open streams ${CAP_NAMES[lease.refused]}`,
      {
        details: { maxStreams: lease.max, per: lease.refused },
      },
    );
  const leaseId = lease.id;
  const from = o.after
    ? new Date(o.after.createdAt).getTime() - RESUME_OVERLAP_MS
    : (o.since ?? services.now().getTime());
  return { roomId: o.roomId, type: o.type, afterSeq: idFloorAt('seq', from), leaseId, credential };
}
