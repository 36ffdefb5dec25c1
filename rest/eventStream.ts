import type { ServerResponse } from 'node:http';
import { authenticate } from '../src/auth/authenticate.js';
import { authorize } from '../src/auth/authorize.js';
import type { Credentials } from '../src/contract.js';
import type { Actor } from '../src/domain/actor.js';
import { readableEventsAfter, type LoggedEvent } from '../src/domain/eventLog.js';
import { STREAM_LEASE_RENEW_MS, STREAM_LEASE_TTL_MS, type EventStreamStart } from '../src/domain/eventStreams.js';
import type { Services } from '../src/domain/services.js';
import { streamLeases } from '../src/domain/streamLeases.js';
import { API_SECURITY_HEADERS, mergeHeaders } from '../src/http/apiHeaders.js';
import { ACCEL_BUFFERING_HEADER, CACHE_CONTROL_HEADER, CONTENT_TYPE_HEADER } from '../src/http/headers.js';
import { eventView } from '../src/procedures/events.js';

/** An idle stream's comment line, so that proxies and clients do not take it for a dead connection. */
export const STREAM_KEEPALIVE_MS = 15_000;
/** How often an open stream's credential is checked again (revoked, expired, scope withdrawn). */
const RECHECK_MS = 5_000;
/** What the client is told to wait before reconnecting (SSE `retry:`). */
const RETRY_MS = 1_000;
/** A client that reads this far behind is dropped rather than buffered for without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const PAGE = 500;
/** Sequence numbers served are remembered this long, so that the catch-up and the live feed never serve one twice. */
const REMEMBER_MS = 60_000;

export interface EventStreams {
  /** Serves an authorized stream on `res` until the client leaves, its credential fails, or `closeAll`. */
  serve(
    res: ServerResponse,
    start: EventStreamStart,
    actor: Actor,
    credentials: Credentials,
    headers: Record<string, string>,
  ): void;
  /** Ends every open stream (shutdown); their clients reconnect elsewhere with `Last-Event-ID`. */
  closeAll(): Promise<void>;
}

/** What a stream hears of a committed event. */
interface FeedEvent {
  seq: string;
  type: string;
  roomId: string;
}

/**
 * The committed event log as a feed (the one MCP subscriptions hear, handed in by the app): every event committed
 * in any process from `ready` on.
 */
export interface EventFeed {
  subscribe(listener: (events: FeedEvent[]) => void): { ready: Promise<void>; unsubscribe: () => void };
  close(): void;
}

/** What the event streams of one server share: the feed (opened with the first stream), the open ones, leases. */
interface Streams {
  readonly services: Services;
  readonly openFeed: () => EventFeed;
  feed: EventFeed | null;
  /** How to end each open stream (and wait for its lease to be dropped). */
  readonly open: Set<() => Promise<void>>;
  readonly leases: ReturnType<typeof streamLeases>;
}

/** One open stream: whom it serves, what it has sent, and its work in order. */
interface Stream {
  readonly streams: Streams;
  readonly res: ServerResponse;
  readonly start: EventStreamStart;
  readonly actor: Actor;
  readonly credentials: Credentials;
  readonly query: { roomId: string | undefined; type: string | undefined; limit: number };
  ended: boolean;
  /** The last sequence number sent. */
  cursor: string;
  /** Sequence numbers sent, with when: the catch-up and the live feed never send one twice. */
  readonly served: Map<string, number>;
  readonly timers: NodeJS.Timeout[];
  /** The stream's reads, one after the other. */
  queue: Promise<void>;
  sub: ReturnType<EventFeed['subscribe']>;
  /** Ends the stream; resolves once its lease is dropped. */
  readonly close: () => Promise<void>;
  readonly finished: () => void;
}

/** The event streams of one server: one feed of the committed log for all of them, opened with the first. */
export function createEventStreams(services: Services, openFeed: () => EventFeed): EventStreams {
  const streams: Streams = {
    services,
    openFeed,
    feed: null,
    open: new Set(),
    leases: streamLeases(services, STREAM_LEASE_TTL_MS),
  };
  return {
    serve: (res, start, actor, credentials, headers) => serve(streams, res, start, actor, credentials, headers),
    async closeAll() {
      await Promise.all([...streams.open].map((close) => close()));
      streams.feed?.close();
      streams.feed = null;
    },
  };
}

function serve(
  streams: Streams,
  res: ServerResponse,
  start: EventStreamStart,
  actor: Actor,
  credentials: Credentials,
  headers: Record<string, string>,
): void {
  const feed = (streams.feed ??= streams.openFeed());
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const stream: Stream = {
    streams,
    res,
    start,
    actor,
    credentials,
    query: { roomId: start.roomId, type: start.type, limit: PAGE },
    ended: false,
    cursor: start.afterSeq,
    served: new Map(),
    timers: [],
    queue: Promise.resolve(),
    sub: { ready: Promise.resolve(), unsubscribe: () => undefined },
    close: () => {
      end(stream);
      return done;
    },
    finished,
  };
  stream.sub = feed.subscribe((events) => onFeed(stream, events));
  streams.open.add(stream.close);
  res.on('close', () => end(stream));
  if (res.destroyed || res.req.socket.destroyed) return end(stream);

  res.writeHead(
    200,
    mergeHeaders(API_SECURITY_HEADERS, headers, {
      [CONTENT_TYPE_HEADER]: 'text/event-stream; charset=utf-8',
      [CACHE_CONTROL_HEADER]: 'no-cache, no-transform',
      [ACCEL_BUFFERING_HEADER]: 'no',
    }),
  );
  res.write(`retry: ${RETRY_MS}\n\n`);
  run(stream, async () => {
    await stream.sub.ready;
    await catchUp(stream);
  });
  startTimers(stream);
}

/** Queues a read of the stream after the ones before it; a failure ends the stream. */
function run(stream: Stream, work: () => Promise<void>): void {
  stream.queue = stream.queue.then(work).catch((err: unknown) => {
    stream.streams.services.log.warn({ err }, 'serving an event stream failed');
    end(stream);
  });
}

function send(stream: Stream, events: LoggedEvent[]): void {
  const { res, served } = stream;
  const now = Date.now();
  for (const e of events) {
    if (stream.ended || served.has(e.seq)) continue;
    served.set(e.seq, now);
    if (e.seq > stream.cursor) stream.cursor = e.seq;
    res.write(`id: ${e.id}\ndata: ${JSON.stringify(eventView(e))}\n\n`);
  }
  for (const [seq, at] of served) if (now - at > REMEMBER_MS) served.delete(seq);
  if (res.writableLength > MAX_BUFFERED_BYTES) end(stream, true);
}

/** Everything after the start, page by page: the catch-up of a resumed stream (and what came meanwhile). */
async function catchUp(stream: Stream): Promise<void> {
  const { manager } = stream.streams.services.ds;
  for (;;) {
    const rows = await readableEventsAfter(manager, stream.actor, { ...stream.query, afterSeq: stream.cursor });
    send(stream, rows);
    if (rows.length < PAGE || stream.ended) return;
  }
}

/** Committed events of the stream's filter, read as the actor may read them and sent. */
function onFeed(stream: Stream, events: FeedEvent[]): void {
  const { start } = stream;
  const seqs = events
    .filter((e) => (!start.roomId || e.roomId === start.roomId) && (!start.type || e.type === start.type))
    .map((e) => e.seq);
  if (!seqs.length) return;
  run(stream, async () => {
    for (let i = 0; i < seqs.length && !stream.ended; i += PAGE) {
      send(
        stream,
        await readableEventsAfter(stream.streams.services.ds.manager, stream.actor, {
          ...stream.query,
          afterSeq: '',
          seqs: seqs.slice(i, i + PAGE),
        }),
      );
    }
  });
}

function end(stream: Stream, destroy = false): void {
  if (stream.ended) return;
  const { streams, res } = stream;
  stream.ended = true;
  for (const t of stream.timers) clearInterval(t);
  stream.sub.unsubscribe();
  streams.open.delete(stream.close);
  if (destroy) res.destroy();
  else res.end();
  streams.leases
    .drop(stream.start.leaseId)
    .catch((err: unknown) => streams.services.log.warn({ err }, 'dropping an event stream lease failed'))
    .finally(stream.finished);
}

/** The keep-alive, the credential checked again, and the lease renewed, while the stream is open. */
function startTimers(stream: Stream): void {
  const { streams, res } = stream;
  const { services } = streams;
  const recheck = async () => {
    try {
      const now = await authenticate(services, stream.credentials);
      if (authorize('rest', services.config.baseUrl, now, 'events:read')) end(stream);
    } catch {
      end(stream);
    }
  };
  stream.timers.push(
    setInterval(() => {
      if (!stream.ended) res.write(': keepalive\n\n');
    }, STREAM_KEEPALIVE_MS),
    setInterval(() => run(stream, recheck), RECHECK_MS),
    setInterval(() => {
      streams.leases
        .renew(stream.start.leaseId)
        .catch((err: unknown) => services.log.warn({ err }, 'renewing an event stream lease failed'));
    }, STREAM_LEASE_RENEW_MS),
  );
  for (const t of stream.timers) t.unref();
}
