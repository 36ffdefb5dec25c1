import type { Response } from 'express';
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
    res: Response,
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

/** The event streams of one server: one feed of the committed log for all of them, opened with the first. */
export function createEventStreams(services: Services, openFeed: () => EventFeed): EventStreams {
  let feed: EventFeed | null = null;
  const open = new Set<() => Promise<void>>();
  const leases = streamLeases(services, STREAM_LEASE_TTL_MS);

  function serve(
    res: Response,
    start: EventStreamStart,
    actor: Actor,
    credentials: Credentials,
    headers: Record<string, string>,
  ): void {
    feed ??= openFeed();
    let ended = false;
    let cursor = start.afterSeq;
    const served = new Map<string, number>();
    const timers: NodeJS.Timeout[] = [];
    let queue: Promise<void> = Promise.resolve();
    const run = (work: () => Promise<void>) => {
      queue = queue.then(work).catch((err: unknown) => {
        services.log.warn({ err }, 'serving an event stream failed');
        end();
      });
    };

    const send = (events: LoggedEvent[]) => {
      const now = Date.now();
      for (const e of events) {
        if (ended || served.has(e.seq)) continue;
        served.set(e.seq, now);
        if (e.seq > cursor) cursor = e.seq;
        res.write(`id: ${e.id}\ndata: ${JSON.stringify(eventView(e))}\n\n`);
      }
      for (const [seq, at] of served) if (now - at > REMEMBER_MS) served.delete(seq);
      if (res.writableLength > MAX_BUFFERED_BYTES) end(true);
    };
    const query = { roomId: start.roomId, type: start.type, limit: PAGE };
    /** Everything after the start, page by page: the catch-up of a resumed stream (and what came meanwhile). */
    const catchUp = async () => {
      for (;;) {
        const rows = await readableEventsAfter(services.ds.manager, actor, { ...query, afterSeq: cursor });
        send(rows);
        if (rows.length < PAGE || ended) return;
      }
    };
    const onFeed = (events: FeedEvent[]) => {
      const seqs = events
        .filter((e) => (!start.roomId || e.roomId === start.roomId) && (!start.type || e.type === start.type))
        .map((e) => e.seq);
      if (!seqs.length) return;
      run(async () => {
        for (let i = 0; i < seqs.length && !ended; i += PAGE) {
          send(
            await readableEventsAfter(services.ds.manager, actor, {
              ...query,
              afterSeq: '',
              seqs: seqs.slice(i, i + PAGE),
            }),
          );
        }
      });
    };
    const sub = feed.subscribe(onFeed);

    let finished: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const close = () => {
      end();
      return done;
    };
    function end(destroy = false) {
      if (ended) return;
      ended = true;
      for (const t of timers) clearInterval(t);
      sub.unsubscribe();
      open.delete(close);
      if (destroy) res.destroy();
      else res.end();
      leases
        .drop(start.leaseId)
        .catch((err: unknown) => services.log.warn({ err }, 'dropping an event stream lease failed'))
        .finally(finished);
    }
    open.add(close);
    res.on('close', () => end());
    if (res.destroyed || res.req.socket.destroyed) return end();

    res.writeHead(
      200,
      mergeHeaders(API_SECURITY_HEADERS, headers, {
        [CONTENT_TYPE_HEADER]: 'text/event-stream; charset=utf-8',
        [CACHE_CONTROL_HEADER]: 'no-cache, no-transform',
        [ACCEL_BUFFERING_HEADER]: 'no',
      }),
    );
    res.write(`retry: ${RETRY_MS}\n\n`);
    run(async () => {
      await sub.ready;
      await catchUp();
    });

    const recheck = async () => {
      try {
        const now = await authenticate(services, credentials);
        if (authorize('rest', services.config.baseUrl, now, 'events:read')) end();
      } catch {
        end();
      }
    };
    timers.push(
      setInterval(() => {
        if (!ended) res.write(': keepalive\n\n');
      }, STREAM_KEEPALIVE_MS),
      setInterval(() => run(recheck), RECHECK_MS),
      setInterval(() => {
        leases
          .renew(start.leaseId)
          .catch((err: unknown) => services.log.warn({ err }, 'renewing an event stream lease failed'));
      }, STREAM_LEASE_RENEW_MS),
    );
    for (const t of timers) t.unref();
  }

  return {
    serve,
    async closeAll() {
      await Promise.all([...open].map((close) => close()));
      feed?.close();
      feed = null;
    },
  };
}
