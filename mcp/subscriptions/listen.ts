import {
  CLIENT_CAPABILITIES_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type RequestId,
  type SubscriptionFilter,
} from '@modelcontextprotocol/server';
import type { Response } from 'express';
import { z } from 'zod';
import { sql } from '../../db/sql.js';
import { authenticate } from '../../src/auth/authenticate.js';
import { authorize } from '../../src/auth/authorize.js';
import { recordAudit } from '../../src/auth/audit.js';
import type { Actor } from '../../src/domain/actor.js';
import { readableRoomsWhere, requireRoom } from '../../src/domain/access.js';
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

export interface ListenHub {
  /**
   * Answers a `subscriptions/listen` request that passed the door: the stream, or a JSON-RPC error. `rights`
   * admits it first, as every method (connectionRights.ts).
   */
  serve(
    res: Response,
    entry: Entry,
    request: { id: RequestId; params?: unknown },
    rights: ConnectionRights,
  ): Promise<void>;
  /** Ends every open stream with the graceful result (shutdown), refuses new ones, and waits for their audit rows. */
  closeAll(): Promise<void>;
  readonly openCount: number;
}

/**
 * MCP 2026-07-28 `subscriptions/listen` (docs/mcp.md "Subscriptions"): a stream of
 * `notifications/resources/updated` for resource URIs the caller can read, and of
 * `notifications/resources/list_changed` when the caller's rooms change, fed by the committed event log
 * (eventFeed.ts). Served here rather than by the SDK's listen router: a stream's rights are re-checked while it
 * lives, and one that loses them is ended on its own with the graceful result, which the router cannot do.
 */
export function createListenHub({ services, catalog }: { services: Services; catalog: ToolCatalog }): ListenHub {
  const feed = createEventFeed(services);
  const leases = streamLeases(services, LEASE_TTL_MS);
  const caps: StreamCaps = {
    credential: services.config.mcpMaxStreams,
    user: services.config.mcpMaxStreamsPerUser,
    organization: services.config.mcpMaxStreamsPerOrganization,
  };
  const CAP_NAMES = { credential: 'a credential', user: 'a person', organization: 'an organization' } as const;
  const byCredential = new Map<string, Set<Stream>>();
  const watch = createRightsWatch(services);
  let open = 0;
  let closing = false;
  const auditing = new Set<Promise<void>>();

  const audit = (entry: Entry, actor: Actor, statusCode: number, errorCode: string | null): Promise<void> => {
    const p = recordAudit(
      services,
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
        actor,
      ),
    ).finally(() => auditing.delete(p));
    auditing.add(p);
    return p;
  };

  async function serve(
    res: Response,
    entry: Entry,
    request: { id: RequestId; params?: unknown },
    rights: ConnectionRights,
  ): Promise<void> {
    const { requestId, actor } = entry;
    const refuse = async (statusCode: number, errorCode: string, code: number, message: string, data?: unknown) => {
      await audit(entry, actor, statusCode, errorCode);
      sendJsonRpcError(res, 200, code, message, { [REQUEST_ID_HEADER]: requestId }, { id: request.id, data });
    };
    const parsed = ListenParams.safeParse(request.params);
    if (!parsed.success)
      return refuse(400, 'validation_error', RPC_INVALID_PARAMS, "Invalid params: 'notifications' must be a filter");
    try {
      const params = request.params as { _meta?: Record<string, unknown> } & Record<string, unknown>;
      await rights.admit(LISTEN_METHOD, params, params._meta?.[CLIENT_CAPABILITIES_META_KEY]);
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      return refuse(403, 'forbidden', err.code, err.message, err.data);
    }
    if (closing) return refuse(503, 'service_unavailable', RPC_INTERNAL_ERROR, 'The server is shutting down');

    // the slot is taken before anything is awaited, so that concurrent requests cannot pass the cap together
    const credential = `${actor.credential.method}:${actor.credential.id}`;
    const mine = byCredential.get(credential) ?? new Set<Stream>();
    const atCap = (per: keyof StreamCaps) =>
      refuse(
        429,
        'rate_limited',
        RPC_INTERNAL_ERROR,
        `Subscription limit reached: ${caps[per]} open streams ${CAP_NAMES[per]}`,
        { maxStreams: caps[per], per },
      );
    if (mine.size >= caps.credential) return atCap('credential');
    const slot: Stream = { end: () => undefined };
    mine.add(slot);
    byCredential.set(credential, mine);
    const release = (s: Stream) => {
      mine.delete(s);
      if (!mine.size && byCredential.get(credential) === mine) byCredential.delete(credential);
    };

    const wanted = parsed.data.notifications;
    const uris = [...new Set(wanted.resourceSubscriptions ?? [])];
    let refusal: Awaited<ReturnType<typeof checkUris>>;
    // what the rights rest on before they are checked: any change after this is seen by the watch
    let baseline: string;
    try {
      [baseline] = await rightsStamps(services.ds, services.now(), [actor]);
      refusal = await checkUris(actor, uris);
    } catch (err) {
      release(slot);
      throw err;
    }
    if (closing) {
      release(slot);
      return refuse(503, 'service_unavailable', RPC_INTERNAL_ERROR, 'The server is shutting down');
    }
    if (refusal) {
      release(slot);
      return refuse(refusal.status, refusal.code, RPC_INVALID_PARAMS, refusal.message, { uri: refusal.uri });
    }
    // the cap across processes: this process's slot above keeps its own requests from racing each other
    let lease: Awaited<ReturnType<typeof leases.take>>;
    try {
      lease = await leases.take({ credential, userId: actor.userId, organizationId: actor.organizationId }, caps);
    } catch (err) {
      release(slot);
      throw err;
    }
    if ('refused' in lease) {
      release(slot);
      return atCap(lease.refused);
    }
    const leaseId = lease.id;
    const honored: SubscriptionFilter = {};
    if (wanted.resourcesListChanged === true) honored.resourcesListChanged = true;
    if (uris.length) honored.resourceSubscriptions = uris;
    const subscribed = new Set(uris);
    const rooms = [...new Set(uris.map((u) => resourceOf(u)!.ids[0]))];
    let readable = '';
    try {
      if (honored.resourcesListChanged) readable = await readableRooms(actor);
    } catch (err) {
      release(slot);
      await leases.drop(leaseId).catch(() => undefined);
      throw err;
    }

    // --- the stream
    let ended = false;
    const timers: NodeJS.Timeout[] = [];
    let unsubscribe = () => undefined as void;
    let unwatch = () => undefined as void;
    const frame = (message: object) => {
      if (ended || res.destroyed || !res.headersSent) return;
      res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      if (res.writableLength > MAX_BUFFERED_BYTES) stream.end('slow_consumer', false);
    };
    const meta = { [SUBSCRIPTION_ID_META_KEY]: request.id };
    const notify = (method: string, params: Record<string, unknown> = {}) =>
      frame({ jsonrpc: '2.0', method, params: { ...params, _meta: meta } });
    const stream: Stream = {
      end(reason, graceful) {
        if (ended) return;
        if (graceful)
          frame({
            jsonrpc: '2.0',
            id: request.id,
            result: { resultType: 'complete', _meta: { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO } },
          });
        ended = true;
        for (const t of timers) clearInterval(t);
        unsubscribe();
        unwatch();
        release(stream);
        open--;
        const dropped = leases
          .drop(leaseId)
          .catch((err: unknown) => services.log.warn({ err, requestId }, 'dropping an mcp stream lease failed'))
          .finally(() => auditing.delete(dropped));
        auditing.add(dropped);
        if (reason === 'slow_consumer') res.destroy();
        // the row is written before the client sees the end, so that an ended stream is always on record
        const finish = () => void res.end();
        audit(entry, actor, 200, reason).then(finish, finish);
      },
    };
    release(slot);
    mine.add(stream);
    byCredential.set(credential, mine);
    open++;
    res.on('close', () => stream.end(null, false));
    if (res.destroyed || res.req.socket.destroyed) return stream.end(null, false);

    const listening = honored.resourceSubscriptions !== undefined;
    let onEvents = (_events: FeedEvent[]) => undefined as void;
    if (listening || honored.resourcesListChanged) {
      const sub = feed.subscribe((events) => onEvents(events));
      unsubscribe = sub.unsubscribe;
      await sub.ready;
    }
    await audit(entry, actor, 200, null);
    if (ended) return;
    entry.headers[REQUEST_ID_HEADER] = requestId;
    res.writeHead(200, {
      [CONTENT_TYPE_HEADER]: 'text/event-stream',
      [CACHE_CONTROL_HEADER]: 'no-cache, no-transform',
      [ACCEL_BUFFERING_HEADER]: 'no',
    });
    notify('notifications/subscriptions/acknowledged', { notifications: honored });
    // nothing the server agreed to: the subscription is over as soon as it is acknowledged
    if (!Object.keys(honored).length) return stream.end(null, true);

    let checking = false;
    const checkRights = async () => {
      if (checking || ended) return;
      checking = true;
      try {
        const reason = await lostRights(entry, uris, rooms);
        if (reason) return stream.end(reason, true);
        if (honored.resourcesListChanged) {
          const now = await readableRooms(actor);
          if (now !== readable && !ended) notify('notifications/resources/list_changed');
          readable = now;
        }
      } catch (err) {
        services.log.warn({ err, requestId }, 'checking an mcp subscription failed');
      } finally {
        checking = false;
      }
    };
    onEvents = (events) => {
      let roomsChanged = false;
      for (const e of events) {
        if (e.type.startsWith('room.') && (honored.resourcesListChanged || rooms.includes(e.roomId)))
          roomsChanged = true;
        if (!listening) continue;
        for (const uri of changedBy(e)) if (subscribed.has(uri)) notify('notifications/resources/updated', { uri });
      }
      if (roomsChanged) checkRights().catch(() => undefined);
    };
    unwatch = watch.add(actor, baseline, () => {
      checkRights().catch(() => undefined);
    });
    const keepAlive = () => {
      if (!ended && !res.destroyed) res.write(': keepalive\n\n');
    };
    timers.push(
      setInterval(keepAlive, KEEPALIVE_MS),
      setInterval(() => {
        checkRights().catch(() => undefined);
      }, RIGHTS_BACKSTOP_MS),
      setInterval(() => {
        leases
          .renew(leaseId)
          .catch((err: unknown) => services.log.warn({ err, requestId }, 'renewing an mcp stream lease failed'));
      }, LEASE_RENEW_MS),
    );
  }

  /** The first URI the actor may not subscribe to, refused as `resources/read` would refuse reading it. */
  async function checkUris(
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
      const scope = catalog.get(r.tool)!.proc.meta.scope;
      if (scope && !actor.scopes.includes(scope))
        return { uri, status: 403, code: 'insufficient_scope', message: `Insufficient scope: ${uri} needs ${scope}` };
      // a room the caller cannot read, and an object not in it, answer as if they did not exist
      const notFound = { uri, status: 404, code: 'not_found', message: `Resource not found: ${uri}` };
      try {
        await requireRoom(services.ds.manager, actor, r.ids[0], 'read');
      } catch {
        return notFound;
      }
      if (r.ids.length > 1 && !(await objectInRoom(r.tool, r.ids[0], r.ids[1]))) return notFound;
    }
    return null;
  }

  async function objectInRoom(tool: string, roomId: string, id: string): Promise<boolean> {
    const table = tool === 'get_record' ? 'records' : 'files';
    const rows = await sql(services.ds, `SELECT 1 AS "one" FROM "${table}" WHERE "id" = ? AND "roomId" = ?`, [
      id,
      roomId,
    ]);
    return rows.rows.length > 0;
  }

  /** Why an open stream may no longer be served: its credential, its scopes or one of its rooms is gone. */
  async function lostRights(entry: Entry, uris: string[], rooms: string[]): Promise<EndReason> {
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
    for (const roomId of rooms) {
      try {
        await requireRoom(services.ds.manager, actor, roomId, 'read');
      } catch {
        return 'not_found';
      }
    }
    return null;
  }

  /** The caller's rooms, as one comparable string: what `resources/list` lists. */
  async function readableRooms(actor: Actor): Promise<string> {
    const rooms = await readableRoomsWhere(services.ds.manager, actor);
    const rows = await sql<{ id: string }>(
      services.ds,
      `SELECT r."id" FROM "rooms" r WHERE ${rooms.where} ORDER BY r."id"`,
      rooms.params,
    );
    return rows.rows.map((r) => r.id).join(',');
  }

  return {
    serve,
    async closeAll() {
      closing = true;
      for (const streams of [...byCredential.values()]) for (const s of [...streams]) s.end(null, true);
      feed.close();
      await Promise.all([...auditing]);
    },
    get openCount() {
      return open;
    },
  };
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
