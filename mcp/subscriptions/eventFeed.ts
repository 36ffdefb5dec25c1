import { committedEventsAfter, type FeedEvent } from '../../src/domain/eventLog.js';
import type { Services } from '../../src/domain/services.js';
import { idFloorAt } from '../../src/domain/ids.js';

/** What a subscription stream needs of a committed event. */
export type { FeedEvent } from '../../src/domain/eventLog.js';

export interface EventFeed {
  /**
   * Hears every event committed from `ready` on, in any process. `ready` settles once the log as it was is read
   * (a stream acknowledges after it, so a write made after the acknowledgement is always announced).
   */
  subscribe(listener: (events: FeedEvent[]) => void): { ready: Promise<void>; unsubscribe: () => void };
  /** Stops polling for good (the listeners stay registered but hear nothing more). */
  close(): void;
}

/** How often the feed reads the log while a stream is open: well inside the delivery target of a second. */
export const POLL_MS = 250;
/**
 * How far back each read reaches. An event's `seq` is taken from the writer's clock when the request began, so
 * a transaction that waited for the database, or a writer whose clock is a little behind, commits an event
 * older than the newest one already read; reading this window again (and skipping what was seen) finds it.
 */
const OVERLAP_MS = 5_000;
/**
 * Every this many polls a read reaches back over the window; the others read on from the newest event seen, so a
 * busy log is not read again four times a second for the rare late commit.
 */
const RESCAN_EVERY = 4;
const BATCH = 1_000;

/**
 * The committed event log, read by one poller per process for every open stream (webhooks and
 * `GET /v1/events` read the same rows): only committed rows are ever seen, and a write in another process is
 * seen like one in this one, with no state shared between processes. No stream open, no polling.
 */
export function createEventFeed(services: Services): EventFeed {
  const listeners = new Set<(events: FeedEvent[]) => void>();
  /** The events read within the overlap window, so a second read does not announce them again. */
  const seen = new Set<string>();
  let cursor = '';
  let timer: NodeJS.Timeout | undefined;
  let reading = false;
  let closed = false;
  let primed: Promise<void> = Promise.resolve();

  let polls = 0;

  const read = async (announce: boolean): Promise<void> => {
    const floor = idFloorAt('seq', services.now().getTime() - OVERLAP_MS);
    for (const seq of seen) if (seq <= floor) seen.delete(seq);
    const rescan = !cursor || cursor < floor || polls++ % RESCAN_EVERY === 0;
    let from = rescan ? (cursor && cursor < floor ? cursor : floor) : cursor;
    for (;;) {
      const rows = await committedEventsAfter(services.ds, from, BATCH);
      const fresh = rows.filter((r) => !seen.has(r.seq));
      for (const r of fresh) seen.add(r.seq);
      if (rows.length) {
        from = rows[rows.length - 1].seq;
        if (from > cursor) cursor = from;
      }
      if (announce && fresh.length && !closed) for (const l of listeners) l(fresh);
      if (rows.length < BATCH) return;
    }
  };

  const tick = () => {
    if (reading || closed) return;
    reading = true;
    read(true)
      .catch((err: unknown) => services.log.warn({ err }, 'reading the event log for mcp subscriptions failed'))
      .finally(() => (reading = false));
  };

  const start = () => {
    // what is already in the log when the first stream opens is the past: read it as seen, announce nothing
    reading = true;
    primed = read(false)
      .catch((err: unknown) => services.log.warn({ err }, 'reading the event log for mcp subscriptions failed'))
      .finally(() => (reading = false));
    timer = setInterval(tick, POLL_MS);
    timer.unref();
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      if (!timer && !closed) start();
      const unsubscribe = () => {
        if (!listeners.delete(listener) || listeners.size || !timer) return;
        clearInterval(timer);
        timer = undefined;
        seen.clear();
        cursor = '';
        polls = 0;
      };
      return { ready: primed, unsubscribe };
    },
    close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
