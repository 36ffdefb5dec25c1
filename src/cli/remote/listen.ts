import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { API_V2 } from '../../webhooks/constants.js';
import { networkErrorClass } from '../../webhooks/httpSender.js';
import { buildBody, type EventSnapshot } from '../../webhooks/payload.js';
import { newWebhookSecret } from '../../webhooks/secretBox.js';
import { buildDeliveryHeaders } from '../../webhooks/signing.js';
import { UsageError } from '../command.js';
import { callApi, refusal, unreachable, type RemoteTarget } from './apiClient.js';
import { CONTENT_TYPE_HEADER, DATE_HEADER, LAST_EVENT_ID_IN } from '../../http/headers.js';

/** An event of `GET /v1/events`. */
interface LoggedEvent {
  id: string;
  type: string;
  createdAt: string;
  organizationId: string | null;
  roomId: string;
  data: { object: { id: string; type: string } };
}

export interface ListenOptions {
  target: RemoteTarget;
  forwardTo: string;
  roomId?: string;
  /** Event types to forward (`record.created`, `record.*`, `*`); all when empty. */
  events: string[];
  /** Signing secret; a new one when absent. */
  secret?: string;
  /** ISO time to start from (read from `GET /v1/events` first); default: from now. */
  since?: string;
  /** Milliseconds before the first attempt to reconnect (doubled on each failed one, up to 10 s). */
  intervalMs: number;
  /** Stop after forwarding this many events. */
  maxEvents?: number;
  /** Lines for people (one per forwarded event). */
  out: (line: string) => void;
  signal: AbortSignal;
}

export interface ForwardResult {
  eventId: string;
  type: string;
  statusCode: number | null;
  errorClass: string | null;
  durationMs: number;
}

const FORWARD_TIMEOUT_MS = 10_000;

export function parseForwardUrl(raw: string | undefined): string {
  if (!raw) throw new UsageError('--forward-to is required (e.g. http://localhost:4000/hook)');
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString();
  } catch {
    /* below */
  }
  throw new UsageError(`--forward-to must be an http(s) URL, got ${JSON.stringify(raw.slice(0, 200))}`);
}

const matches = (patterns: string[], type: string) =>
  !patterns.length ||
  patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));

/** POSTs one event to the local receiver as a v2 delivery, signed with `secret`. Never throws. */
export async function forwardEvent(
  url: string,
  e: LoggedEvent,
  secret: string,
  signal: AbortSignal,
): Promise<ForwardResult> {
  const snapshot: EventSnapshot = {
    id: e.id,
    type: e.type,
    createdAt: e.createdAt,
    organizationId: e.organizationId,
    roomId: e.roomId,
    object: e.data.object,
  };
  const deliveryId = randomUUID();
  const body = buildBody(API_V2, snapshot, deliveryId);
  const headers = buildDeliveryHeaders({
    apiVersion: API_V2,
    eventId: e.id,
    eventType: e.type,
    deliveryId,
    secrets: { current: secret, next: null },
    body,
    now: new Date(),
    customHeaders: [],
  });
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    });
    await res.arrayBuffer().catch(() => undefined);
    const redirect = res.status >= 300 && res.status < 400;
    return {
      eventId: e.id,
      type: e.type,
      statusCode: res.status,
      errorClass: redirect ? 'redirect_not_followed' : null,
      durationMs: took(),
    };
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return {
      eventId: e.id,
      type: e.type,
      statusCode: null,
      errorClass: networkErrorClass(err, timedOut),
      durationMs: took(),
    };
  }
}

export function resultLine(r: ForwardResult): string {
  const outcome =
    r.statusCode !== null
      ? `${r.statusCode}${r.statusCode >= 200 && r.statusCode < 300 ? ' ok' : r.errorClass ? ` ${r.errorClass}` : ' failed'}`
      : `failed: ${r.errorClass}`;
  return `${new Date().toISOString()}  ${r.type}  ${r.eventId}  -> ${outcome} (${r.durationMs} ms)`;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** Event ids forwarded are remembered this long: a resumed stream repeats a few seconds, skipped by id. */
const REMEMBER_MS = 10 * 60_000;
/** How far back a reconnection asks the stream to start (the server allows an hour). */
const SINCE_REACH_MS = 50 * 60_000;
/** The longest wait between two attempts to reconnect. */
const MAX_RECONNECT_MS = 10_000;

/** One server-sent event of the stream: its `id:` and `data:` lines. */
interface SseMessage {
  id?: string;
  data: string;
}

/**
 * Reads a `text/event-stream` body message by message (blank-line separated; comment lines and `retry:` skipped).
 */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: SseMessage = { data: '' };
  let hasData = false;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === '\r' ? 2 : 1));
      if (line === '') {
        if (hasData) yield current;
        current = { data: '' };
        hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') current.id = value;
      else if (field === 'data') {
        current.data += (hasData ? '\n' : '') + value;
        hasData = true;
      }
    }
  }
}

/**
 * Opens `GET /v1/events/stream` (after `lastEventId` when given). A refusal (key, scope, room) is a RemoteError;
 * an unreachable server too.
 */
async function openStream(
  o: ListenOptions,
  from: { lastEventId?: string; since?: string },
  signal: AbortSignal,
): Promise<{ body: ReadableStream<Uint8Array>; date: Date | null }> {
  const { lastEventId } = from;
  const q = new URLSearchParams();
  if (o.roomId) q.set('roomId', o.roomId);
  if (!lastEventId && from.since) q.set('since', from.since);
  const path = `/v1/events/stream${q.size ? `?${q}` : ''}`;
  let res: Response;
  try {
    res = await fetch(o.target.baseUrl + path, {
      headers: {
        authorization: `Bearer ${o.target.key}`,
        accept: 'text/event-stream',
        ...(lastEventId ? { [LAST_EVENT_ID_IN]: lastEventId } : {}),
      },
      redirect: 'manual',
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw unreachable(o.target, err);
  }
  if (res.status === 200 && res.body && (res.headers.get(CONTENT_TYPE_HEADER) ?? '').startsWith('text/event-stream')) {
    const date = new Date(res.headers.get(DATE_HEADER) ?? '');
    return { body: res.body, date: Number.isNaN(date.getTime()) ? null : date };
  }
  const text = await res.text().catch(() => '');
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  throw Object.assign(refusal(o.target, 'GET', path, res.status, parsed), { status: res.status });
}

/** A refusal that another attempt cannot cure: the key, its scope, the room. */
const isFinal = (err: unknown) => {
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
};

/**
 * `svc listen`: follows the event log through the public API's stream (`GET /v1/events/stream`, server-sent
 * events: one unit when it opens, nothing while it waits) and forwards each event, signed with the local secret,
 * to the local URL with the v2 headers and body, printing one line per result. When the connection is lost (the
 * server restarts), it opens the stream again after the last event it received (`Last-Event-ID`), and skips by
 * id what the resumed stream repeats: nothing missed, nothing forwarded twice. With `since`, the events from then
 * to now are read first from `GET /v1/events`. The first connection checks the server, the key and
 * `events:read` (a clear RemoteError otherwise). Stops on `signal` (SIGINT) or after `maxEvents`.
 */
export async function listen(o: ListenOptions): Promise<{ secret: string; forwarded: ForwardResult[] }> {
  const secret = o.secret ?? newWebhookSecret();
  const forwarded: ForwardResult[] = [];
  const seen = new Map<string, number>();
  const done = () => o.signal.aborted || (o.maxEvents !== undefined && forwarded.length >= o.maxEvents);
  let lastEventId: string | undefined;

  /** Forwards one event unless it was forwarded already or is filtered out. */
  const handle = async (e: LoggedEvent) => {
    lastEventId = e.id;
    if (seen.has(e.id)) return;
    const now = Date.now();
    seen.set(e.id, now);
    for (const [id, at] of seen) if (now - at > REMEMBER_MS) seen.delete(id);
    if (!matches(o.events, e.type) || done()) return;
    const r = await forwardEvent(o.forwardTo, e, secret, o.signal);
    if (o.signal.aborted && r.statusCode === null) return;
    forwarded.push(r);
    o.out(resultLine(r));
  };

  // the first connection: a refusal or an unreachable server ends the command with one line
  const stopStream = new AbortController();
  const stopAll = () => stopStream.abort();
  o.signal.addEventListener('abort', stopAll, { once: true });
  try {
    if (o.since !== undefined) {
      const room = o.roomId ? `&roomId=${encodeURIComponent(o.roomId)}` : '';
      let cursor: string | null = null;
      do {
        const q: string = `/v1/events?limit=200&since=${encodeURIComponent(o.since)}${room}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page: { data: LoggedEvent[]; nextCursor: string | null } = (
          await callApi<{ data: LoggedEvent[]; nextCursor: string | null }>(o.target, 'GET', q, undefined, o.signal)
        ).body;
        for (const e of page.data) if (!done()) await handle(e);
        cursor = page.nextCursor;
      } while (cursor && !done());
    }
    const first = done() ? null : await openStream(o, { lastEventId }, stopStream.signal);
    let body = first?.body ?? null;
    // until an event arrives, a reconnection starts where the first stream started (the server's time, from its
    // Date header), as far back as a stream reaches; after that, from the reconnection on
    const startedAt = first?.date ?? new Date();
    const since = () => (Date.now() - startedAt.getTime() < SINCE_REACH_MS ? startedAt.toISOString() : undefined);
    o.out(`Signing secret: ${secret}`);
    o.out(
      `Forwarding ${o.events.length ? o.events.join(', ') : 'every'} event${o.roomId ? ` of ${o.roomId}` : ''} from ${o.target.baseUrl} to ${o.forwardTo} as they happen; Ctrl-C stops.`,
    );
    let wait = o.intervalMs;
    while (body && !done()) {
      try {
        for await (const m of sseMessages(body)) {
          wait = o.intervalMs;
          let e: LoggedEvent;
          try {
            e = JSON.parse(m.data) as LoggedEvent;
          } catch {
            continue;
          }
          await handle(e);
          if (done()) break;
        }
      } catch (err) {
        if (done()) break;
        o.out(`Connection to ${o.target.baseUrl} lost (${(err as Error).message}); reconnecting`);
      }
      if (done()) break;
      body = null;
      // the stream ended (the server restarted or shut down): open it again after the last event received
      while (!body && !done()) {
        await sleep(wait, o.signal);
        if (done()) break;
        try {
          body = (await openStream(o, { lastEventId, since: since() }, stopStream.signal)).body;
          o.out(`Reconnected to ${o.target.baseUrl}${lastEventId ? `, resuming after ${lastEventId}` : ''}`);
        } catch (err) {
          if (done()) break;
          if (isFinal(err)) throw err;
          wait = Math.min(wait * 2, MAX_RECONNECT_MS);
        }
      }
    }
  } catch (err) {
    if (!o.signal.aborted) throw err;
  } finally {
    o.signal.removeEventListener('abort', stopAll);
    stopStream.abort();
  }
  return { secret, forwarded };
}
