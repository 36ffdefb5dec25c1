import {
  CLIENT_CAPABILITIES_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type RequestId,
  type SubscriptionFilter,
} from '@modelcontextprotocol/server';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { authenticate } from '../../src/auth/authenticate.js';
import { authorize } from '../../src/auth/authorize.js';
import { recordAudit } from '../../src/auth/audit.js';
import type { Actor } from '../../src/domain/actor.js';
import { readableInRoom, readableRoomIds } from '../../src/domain/objectRooms.js';
import type { Services } from '../../src/domain/services.js';
import { rightsStamps, type RightsHolder } from '../../src/domain/rightsStamps.js';
import { streamLeases, type StreamCaps } from '../../src/domain/streamLeases.js';
import { auditRow } from '../../src/http/auditRow.js';
import {
  ACCEL_BUFFERING_HEADER,
  CACHE_CONTROL_HEADER,
  CONTENT_TYPE_HEADER,
  REQUEST_ID_HEADER,
} from '../../src/http/headers.js';
import { createEventFeed, type FeedEvent } from './eventFeed.js';
import { SERVER_INFO } from '../server/createMcpServer.js';
import type { Entry } from '../transport/door.js';
import { sendJsonRpcError } from '../transport/httpReplies.js';
import { changedBy, resourceOf } from '../resources/resources.js';
import type { ConnectionRights } from '../server/connectionRights.js';
import { RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, RpcError } from '../server/rpcError.js';
import type { ToolCatalog } from '../tools/toolCatalog.js';

export const LISTEN_METHOD = 'subscriptions/listen';

/** An idle stream's keep-alive comment, so that proxies and clients do not take it for a dead connection. */
export const KEEPALIVE_MS = 15_000;
/**
 * How often the rights every open stream rests on are read, together (rightsStamps: its credential revoked or
 * expired, the person's role and rooms, a delegated token's run): a stream whose rights changed checks them again
 * in full, at once. A room event (a member added, a room created) makes the streams it concerns check too.
 */
export const WATCH_MS = 1_000;
/** Each stream also checks its rights in full this often, whatever the watch saw: the backstop. */
export const RIGHTS_BACKSTOP_MS = 60_000;
/** A client that reads this far behind is dropped rather than buffered for without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * A stream's lease (the cross-process stream cap) is renewed this often and lives three times as long, so a
 * process that dies frees its credentials' slots within that time.
 */
export const LEASE_RENEW_MS = 10_000;
const LEASE_TTL_MS = 3 * LEASE_RENEW_MS;
const MAX_URIS = 100;

/** The listen request's filter, bounded; unknown members are ignored (and so left out of the acknowledgement). */
const ListenParams = z.object({
  notifications: z.object({
    toolsListChanged: z.boolean().optional(),
    promptsListChanged: z.boolean().optional(),
    resourcesListChanged: z.boolean().optional(),
    resourceSubscriptions: z.array(z.string().max(1000)).max(MAX_URIS).optional(),
  }),
});

/** Why a stream ended: the end row's error code (null when the client or the server closed it normally). */
type EndReason = null | 'unauthorized' | 'forbidden' | 'not_found' | 'slow_consumer';

interface Stream {
  end(reason: EndReason, graceful: boolean): void;
}

type ListenRequest = { id: RequestId; params?: unknown };

export interface ListenHub {
  /**
   * Answers a `subscriptions/listen` request that passed the door: the stream, or a JSON-RPC error. `rights`
   * admits it first, as every method (connectionRights.ts).
   */
  serve(res: ServerResponse, entry: Entry, request: ListenRequest, rights: ConnectionRights): Promise<void>;
  /** Ends every open stream with the graceful result (shutdown), refuses new ones, and waits for their audit rows. */
  closeAll(): Promise<void>;
  readonly openCount: number;
}

const CAP_NAMES = { credential: 'a credential', user: 'a person', organization: 'an organization' } as const;

/** What the hub of one process holds: its open streams by credential, their leases, and the rows being written. */
interface Hub {
  readonly services: Services;
  readonly catalog: ToolCatalog;
  readonly feed: ReturnType<typeof createEventFeed>;
  readonly leases: ReturnType<typeof streamLeases>;
  readonly caps: StreamCaps;
  readonly byCredential: Map<string, Set<Stream>>;
  readonly watch: ReturnType<typeof createRightsWatch>;
  readonly auditing: Set<Promise<void>>;
  open: number;
  closing: boolean;
}

/** One listen request being answered. */
interface Call {
  readonly hub: Hub;
  readonly res: ServerResponse;
  readonly entry: Entry;
  readonly request: ListenRequest;
}

/** The streams of the caller's credential (`mine`), in which the request holds a slot while it is set up. */
interface Slots {
  readonly credential: string;
  readonly mine: Set<Stream>;
}

/** What a stream is set up with once its checks passed. */
interface Prepared {
  readonly uris: string[];
  readonly honored: SubscriptionFilter;
  /** What the rights rested on before they were checked: any change after this is seen by the watch. */
  readonly baseline: string;
  readonly leaseId: string;
  readonly readable: string;
}

/** An open stream: what it listens to and where it stands. */
interface ListenStream extends Stream {
  readonly call: Call;
  readonly slots: Slots;
  readonly prepared: Prepared;
  readonly subscribed: Set<string>;
  readonly rooms: string[];
  readonly meta: Record<string, unknown>;
  /** The caller's rooms as last read (`readableRooms`), for `list_changed`. */
  readable: string;
  ended: boolean;
  /** Events are announced once the stream is acknowledged and watched. */
  live: boolean;
  checking: boolean;
  timers: NodeJS.Timeout[];
  unsubscribe: () => void;
  unwatch: () => void;
}

/**
 * MCP 2026-07-28 `subscriptions/listen` (docs/mcp.md "Subscriptions"): a stream of
 * `notifications/resources/updated` for resource URIs the caller can read, and of
 * `notifications/resources/list_changed` when the caller's rooms change, fed by the committed event log
 * (eventFeed.ts). Served here rather than by the SDK's listen router: a stream's rights are re-checked while it
 * lives, and one that loses them is ended on its own with the graceful result, which the router cannot do.
 */
export function createListenHub({ services, catalog }: { services: Services; catalog: ToolCatalog }): ListenHub {
  const hub: Hub = {
    services,
    catalog,
    feed: createEventFeed(services),
    leases: streamLeases(services, LEASE_TTL_MS),
    caps: {
      credential: services.config.mcpMaxStreams,
      user: services.config.mcpMaxStreamsPerUser,
      organization: services.config.mcpMaxStreamsPerOrganization,
    },
    byCredential: new Map(),
    watch: createRightsWatch(services),
    auditing: new Set(),
    open: 0,
    closing: false,
  };
  return {
    serve: (res, entry, request, rights) => serve({ hub, res, entry, request }, rights),
    async closeAll() {
      hub.closing = true;
      for (const streams of [...hub.byCredential.values()]) for (const s of [...streams]) s.end(null, true);
      hub.feed.close();
      await Promise.all([...hub.auditing]);
    },
    get openCount() {
      return hub.open;
    },
  };
}

/** The request's audit row (and a stream's end row), kept until written so that shutdown can wait for it. */
function audit(call: Call, statusCode: number, errorCode: string | null): Promise<void> {
  const { hub, entry } = call;
  const p = recordAudit(
    hub.services,
    auditRow(
      {
        requestId: entry.requestId,
        surface: 'mcp',
        method: 'LISTEN',
        routePattern: LISTEN_METHOD,
        statusCode,
        errorCode,
        units: 0,
      },
      entry.actor,
    ),
  ).finally(() => hub.auditing.delete(p));
  hub.auditing.add(p);
  return p;
}

async function refuse(
  call: Call,
  statusCode: number,
  errorCode: string,
  code: number,
  message: string,
  data?: unknown,
): Promise<void> {
  await audit(call, statusCode, errorCode);
  const { res, entry, request } = call;
  sendJsonRpcError(res, 200, code, message, { [REQUEST_ID_HEADER]: entry.requestId }, { id: request.id, data });
}

const refuseClosing = (call: Call) =>
  refuse(call, 503, 'service_unavailable', RPC_INTERNAL_ERROR, 'The server is shutting down');

function refuseAtCap(call: Call, per: keyof StreamCaps): Promise<void> {
  const { caps } = call.hub;
  return refuse(
    call,
    429,
    'rate_limited',
    RPC_INTERNAL_ERROR,
    `Subscription limit reached: ${caps[per]} open streams ${CAP_NAMES[per]}`,
    { maxStreams: caps[per], per },
  );
}

function release({ hub, slots }: { hub: Hub; slots: Slots }, s: Stream): void {
  slots.mine.delete(s);
  if (!slots.mine.size && hub.byCredential.get(slots.credential) === slots.mine)
    hub.byCredential.delete(slots.credential);
}

async function serve(call: Call, rights: ConnectionRights): Promise<void> {
  const { hub, entry, request } = call;
  const { actor } = entry;
  const parsed = ListenParams.safeParse(request.params);
  if (!parsed.success)
    return refuse(
      call,
      400,
      'validation_error',
      RPC_INVALID_PARAMS,
      "Invalid params: 'notifications' must be a filter",
    );
  try {
    const params = request.params as { _meta?: Record<string, unknown> } & Record<string, unknown>;
    await rights.admit(LISTEN_METHOD, params, params._meta?.[CLIENT_CAPABILITIES_META_KEY]);
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    return refuse(call, 403, 'forbidden', err.code, err.message, err.data);
  }
  if (hub.closing) return refuseClosing(call);

  // the slot is taken before anything is awaited, so that concurrent requests cannot pass the cap together
  const credential = `${actor.credential.method}:${actor.credential.id}`;
  const slots: Slots = { credential, mine: hub.byCredential.get(credential) ?? new Set<Stream>() };
  if (slots.mine.size >= hub.caps.credential) return refuseAtCap(call, 'credential');
  const slot: Stream = { end: () => undefined };
  slots.mine.add(slot);
  hub.byCredential.set(credential, slots.mine);
  const prepared = await prepare(call, slots, slot, parsed.data.notifications);
  if (prepared) return openStream(call, slots, slot, prepared);
}

/** The stream's checks and its lease, the slot released on a refusal (answered here) or an error. */
async function prepare(
  call: Call,
  slots: Slots,
  slot: Stream,
  wanted: z.infer<typeof ListenParams>['notifications'],
): Promise<Prepared | undefined> {
  const { hub, entry } = call;
  const { actor } = entry;
  const held = { hub, slots };
  const uris = [...new Set(wanted.resourceSubscriptions ?? [])];
  let refusal: Awaited<ReturnType<typeof checkUris>>;
  let baseline: string;
  try {
    [baseline] = await rightsStamps(hub.services.ds, hub.services.now(), [actor]);
    refusal = await checkUris(hub, actor, uris);
  } catch (err) {
    release(held, slot);
    throw err;
  }
  if (hub.closing) {
    release(held, slot);
    await refuseClosing(call);
    return undefined;
  }
  if (refusal) {
    release(held, slot);
    await refuse(call, refusal.status, refusal.code, RPC_INVALID_PARAMS, refusal.message, { uri: refusal.uri });
    return undefined;
  }
  // the cap across processes: this process's slot above keeps its own requests from racing each other
  let lease: Awaited<ReturnType<typeof hub.leases.take>>;
  try {
    const owner = { credential: slots.credential, userId: actor.userId, organizationId: actor.organizationId };
    lease = await hub.leases.take(owner, hub.caps);
  } catch (err) {
    release(held, slot);
    throw err;
  }
  if ('refused' in lease) {
    release(held, slot);
    await refuseAtCap(call, lease.refused);
    return undefined;
  }
  const honored: SubscriptionFilter = {};
  if (wanted.resourcesListChanged === true) honored.resourcesListChanged = true;
  if (uris.length) honored.resourceSubscriptions = uris;
  let readable = '';
  try {
    if (honored.resourcesListChanged) readable = await readableRooms(hub, actor);
  } catch (err) {
    release(held, slot);
    await hub.leases.drop(lease.id).catch(() => undefined);
    throw err;
  }
  return { uris, honored, baseline, leaseId: lease.id, readable };
}

/** Opens the stream in place of the slot: its row, its headers, the acknowledgement, then what it listens to. */
async function openStream(call: Call, slots: Slots, slot: Stream, prepared: Prepared): Promise<void> {
  const { hub, res, entry, request } = call;
  const { uris, honored } = prepared;
  const stream: ListenStream = {
    call,
    slots,
    prepared,
    subscribed: new Set(uris),
    rooms: [...new Set(uris.map((u) => resourceOf(u)!.ids[0]))],
    meta: { [SUBSCRIPTION_ID_META_KEY]: request.id },
    readable: prepared.readable,
    ended: false,
    live: false,
    checking: false,
    timers: [],
    unsubscribe: () => undefined,
    unwatch: () => undefined,
    end: (reason, graceful) => endStream(stream, reason, graceful),
  };
  release({ hub, slots }, slot);
  slots.mine.add(stream);
  hub.byCredential.set(slots.credential, slots.mine);
  hub.open++;
  res.on('close', () => stream.end(null, false));
  if (res.destroyed || res.req.socket.destroyed) return stream.end(null, false);

  if (honored.resourceSubscriptions !== undefined || honored.resourcesListChanged) {
    const sub = hub.feed.subscribe((events) => {
      if (stream.live) announce(stream, events);
    });
    stream.unsubscribe = sub.unsubscribe;
    await sub.ready;
  }
  await audit(call, 200, null);
  if (stream.ended) return;
  entry.headers[REQUEST_ID_HEADER] = entry.requestId;
  res.writeHead(200, {
    [CONTENT_TYPE_HEADER]: 'text/event-stream',
    [CACHE_CONTROL_HEADER]: 'no-cache, no-transform',
    [ACCEL_BUFFERING_HEADER]: 'no',
  });
  notify(stream, 'notifications/subscriptions/acknowledged', { notifications: honored });
  // nothing the server agreed to: the subscription is over as soon as it is acknowledged
  if (!Object.keys(honored).length) return stream.end(null, true);
  watchStream(stream);
}

function frame(stream: ListenStream, message: object): void {
  const { res } = stream.call;
  if (stream.ended || res.destroyed || !res.headersSent) return;
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  if (res.writableLength > MAX_BUFFERED_BYTES) stream.end('slow_consumer', false);
}

const notify = (stream: ListenStream, method: string, params: Record<string, unknown> = {}) =>
  frame(stream, { jsonrpc: '2.0', method, params: { ...params, _meta: stream.meta } });

function endStream(stream: ListenStream, reason: EndReason, graceful: boolean): void {
  if (stream.ended) return;
  const { call, slots, prepared } = stream;
  const { hub, res, entry, request } = call;
  if (graceful)
    frame(stream, {
      jsonrpc: '2.0',
      id: request.id,
      result: { resultType: 'complete', _meta: { ...stream.meta, [SERVER_INFO_META_KEY]: SERVER_INFO } },
    });
  stream.ended = true;
  for (const t of stream.timers) clearInterval(t);
  stream.unsubscribe();
  stream.unwatch();
  release({ hub, slots }, stream);
  hub.open--;
  const dropped = hub.leases
    .drop(prepared.leaseId)
    .catch((err: unknown) =>
      hub.services.log.warn({ err, requestId: entry.requestId }, 'dropping an mcp stream lease failed'),
    )
    .finally(() => hub.auditing.delete(dropped));
  hub.auditing.add(dropped);
  if (reason === 'slow_consumer') res.destroy();
  // the row is written before the client sees the end, so that an ended stream is always on record
  const finish = () => void res.end();
  audit(call, 200, reason).then(finish, finish);
}

/** Announces what the committed events change among what the stream listens to. */
function announce(stream: ListenStream, events: FeedEvent[]): void {
  const { honored } = stream.prepared;
  const listening = honored.resourceSubscriptions !== undefined;
  let roomsChanged = false;
  for (const e of events) {
    if (e.type.startsWith('room.') && (honored.resourcesListChanged || stream.rooms.includes(e.roomId)))
      roomsChanged = true;
    if (!listening) continue;
    for (const uri of changedBy(e))
      if (stream.subscribed.has(uri)) notify(stream, 'notifications/resources/updated', { uri });
  }
  if (roomsChanged) checkRights(stream).catch(() => undefined);
}

/** The stream's rights checked again in full: ended with the graceful result when lost; its rooms' list compared. */
async function checkRights(stream: ListenStream): Promise<void> {
  if (stream.checking || stream.ended) return;
  const { hub, entry } = stream.call;
  stream.checking = true;
  try {
    const reason = await lostRights(hub, entry, stream.prepared.uris, stream.rooms);
    if (reason) return stream.end(reason, true);
    if (stream.prepared.honored.resourcesListChanged) {
      const now = await readableRooms(hub, entry.actor);
      if (now !== stream.readable && !stream.ended) notify(stream, 'notifications/resources/list_changed');
      stream.readable = now;
    }
  } catch (err) {
    hub.services.log.warn({ err, requestId: entry.requestId }, 'checking an mcp subscription failed');
  } finally {
    stream.checking = false;
  }
}

/** From the acknowledgement on: events, the rights watch, the keep-alive, the backstop check, the lease renewal. */
function watchStream(stream: ListenStream): void {
  const { hub, res, entry } = stream.call;
  stream.live = true;
  stream.unwatch = hub.watch.add(entry.actor, stream.prepared.baseline, () => {
    checkRights(stream).catch(() => undefined);
  });
  const keepAlive = () => {
    if (!stream.ended && !res.destroyed) res.write(': keepalive\n\n');
  };
  stream.timers.push(
    setInterval(keepAlive, KEEPALIVE_MS),
    setInterval(() => {
      checkRights(stream).catch(() => undefined);
    }, RIGHTS_BACKSTOP_MS),
    setInterval(() => {
      hub.leases
        .renew(stream.prepared.leaseId)
        .catch((err: unknown) =>
          hub.services.log.warn({ err, requestId: entry.requestId }, 'renewing an mcp stream lease failed'),
        );
    }, LEASE_RENEW_MS),
  );
}

/** The first URI the actor may not subscribe to, refused as `resources/read` would refuse reading it. */
async function checkUris(
  hub: Hub,
  actor: Actor,
  uris: string[],
): Promise<{ uri: string; status: number; code: string; message: string } | null> {
  for (const uri of uris) {
    const r = resourceOf(uri);
    if (!r)
      return {
        uri,
        status: 404,
        code: 'not_found',
        message: `Resource not found: ${uri} matches no resource template`,
      };
    const scope = hub.catalog.get(r.tool)!.proc.meta.scope;
    if (scope && !actor.scopes.includes(scope))
      return { uri, status: 403, code: 'insufficient_scope', message: `Insufficient scope: ${uri} needs ${scope}` };
    // a room the caller cannot read, and an object not in it, answer as if they did not exist
    const object = r.object && r.ids.length > 1 ? { kind: r.object, id: r.ids[1] } : undefined;
    if (!(await readableInRoom(hub.services.ds.manager, actor, r.ids[0], object)))
      return { uri, status: 404, code: 'not_found', message: `Resource not found: ${uri}` };
  }
  return null;
}

/** Why an open stream may no longer be served: its credential, its scopes or one of its rooms is gone. */
async function lostRights(hub: Hub, entry: Entry, uris: string[], rooms: string[]): Promise<EndReason> {
  const { services, catalog } = hub;
  let actor: Actor;
  try {
    actor = await authenticate(services, entry.credentials);
  } catch {
    return 'unauthorized';
  }
  if (authorize('mcp', services.config.baseUrl, actor)) return 'forbidden';
  for (const uri of uris) {
    const scope = catalog.get(resourceOf(uri)!.tool)!.proc.meta.scope;
    if (scope && !actor.scopes.includes(scope)) return 'forbidden';
  }
  for (const roomId of rooms) if (!(await readableInRoom(services.ds.manager, actor, roomId))) return 'not_found';
  return null;
}

/** The caller's rooms, as one comparable string: what `resources/list` lists. */
async function readableRooms(hub: Hub, actor: Actor): Promise<string> {
  return (await readableRoomIds(hub.services.ds.manager, actor)).join(',');
}

interface Watched {
  holder: RightsHolder;
  stamp: string;
  changed: () => void;
}

/**
 * One reader, per process, of what every open stream's rights rest on (rightsStamps), every WATCH_MS while a stream
 * is open: a few statements a second for all streams together, and a stream is told only when its own changed.
 */
function createRightsWatch(services: Services) {
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;
  let reading = false;
  const read = async () => {
    if (reading || !watched.size) return;
    reading = true;
    try {
      const list = [...watched];
      const stamps = await rightsStamps(
        services.ds,
        services.now(),
        list.map((w) => w.holder),
      );
      list.forEach((w, i) => {
        if (w.stamp === stamps[i]) return;
        w.stamp = stamps[i];
        if (watched.has(w)) w.changed();
      });
    } catch (err) {
      services.log.warn({ err }, 'reading the rights of mcp subscriptions failed');
    } finally {
      reading = false;
    }
  };
  return {
    /** Watches a stream's rights from `stamp` (read before they were checked); returns how to stop. */
    add(holder: RightsHolder, stamp: string, changed: () => void): () => void {
      const w: Watched = { holder, stamp, changed };
      watched.add(w);
      if (!timer) {
        timer = setInterval(() => {
          read().catch(() => undefined);
        }, WATCH_MS);
        timer.unref();
      }
      return () => {
        watched.delete(w);
        if (!watched.size && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}
