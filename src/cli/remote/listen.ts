import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { API_V2 } from '../../webhooks/constants.js';
import { networkErrorClass } from '../../webhooks/httpSender.js';
import { buildBody, type EventSnapshot } from '../../webhooks/payload.js';
import { newWebhookSecret } from '../../webhooks/secretBox.js';
import { buildDeliveryHeaders } from '../../webhooks/signing.js';
import { UsageError } from '../command.js';
import { callApi, type RemoteTarget } from './apiClient.js';
import { DATE_HEADER } from '../../http/headers.js';

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
  /** ISO time to start from; default: the server's time at start. */
  since?: string;
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

/** Events older than the newest seen by this much are asked for again (writes commit out of time order). */
const LOOKBACK_MS = 30_000;
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

/**
 * `svc listen`: follows the event log through the public API (`GET /v1/events?since=…`, every page) and
 * forwards each new event, signed with the local secret, to the local URL with the v2 headers and body,
 * printing one line per result. The first request checks the server, the key and `events:read` (a clear
 * RemoteError otherwise). Stops on `signal` (SIGINT) or after `maxEvents`.
 */
export async function listen(o: ListenOptions): Promise<{ secret: string; forwarded: ForwardResult[] }> {
  const secret = o.secret ?? newWebhookSecret();
  const room = o.roomId ? `&roomId=${encodeURIComponent(o.roomId)}` : '';
  // the check: reachable, key accepted, events:read granted; its Date header is the server's time
  const probe = await callApi(o.target, 'GET', `/v1/events?limit=1${room}`);
  const serverNow = new Date(probe.headers.get(DATE_HEADER) ?? Date.now());
  let since = o.since ?? (Number.isNaN(serverNow.getTime()) ? new Date() : serverNow).toISOString();
  const seen = new Map<string, string>();
  /** One page of the event log since `since` (null once the listener is stopped meanwhile). */
  const pageOf = async (cursor: string | null) => {
    const q = `/v1/events?limit=200&since=${encodeURIComponent(since)}${room}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    try {
      return (
        await callApi<{ data: LoggedEvent[]; nextCursor: string | null }>(o.target, 'GET', q, undefined, o.signal)
      ).body;
    } catch (err) {
      if (o.signal.aborted) return null;
      throw err;
    }
  };
  if (o.since === undefined) {
    // The Date header counts whole seconds, so `since` falls up to a second before the start: what the log already
    // holds from that second is not new, and is not forwarded.
    let cursor: string | null = null;
    do {
      const page = await pageOf(cursor);
      for (const e of page?.data ?? []) seen.set(e.id, e.createdAt);
      cursor = page?.nextCursor ?? null;
    } while (cursor);
  }
  o.out(`Signing secret: ${secret}`);
  o.out(
    `Forwarding ${o.events.length ? o.events.join(', ') : 'every'} event${o.roomId ? ` of ${o.roomId}` : ''} from ${o.target.baseUrl} to ${o.forwardTo} (since ${since}); Ctrl-C stops.`,
  );
  const forwarded: ForwardResult[] = [];
  const done = () => o.signal.aborted || (o.maxEvents !== undefined && forwarded.length >= o.maxEvents);
  while (!done()) {
    let cursor: string | null = null;
    let newest = since;
    do {
      const page = await pageOf(cursor);
      if (!page) break;
      for (const e of page.data) {
        if (e.createdAt > newest) newest = e.createdAt;
        if (seen.has(e.id)) continue;
        seen.set(e.id, e.createdAt);
        if (!matches(o.events, e.type) || done()) continue;
        const r = await forwardEvent(o.forwardTo, e, secret, o.signal);
        if (o.signal.aborted && r.statusCode === null) break;
        forwarded.push(r);
        o.out(resultLine(r));
      }
      cursor = page.nextCursor;
    } while (cursor && !done());
    const next = new Date(new Date(newest).getTime() - LOOKBACK_MS).toISOString();
    if (next > since) {
      since = next;
      for (const [id, at] of seen) if (at < since) seen.delete(id);
    }
    if (!done()) await sleep(o.intervalMs, o.signal);
  }
  return { secret, forwarded };
}
