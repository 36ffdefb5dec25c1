import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Services } from '../../src/domain/services.js';
import { readMessage } from './body.js';
import { createDispatch } from '../tools/dispatch.js';
import { serverCardHandler } from '../discovery.js';
import { createDoor, isUnderMcp, type DoorHandler } from './door.js';
import { type Fail, type Listener, pathOfUrl, PLAIN_URL } from '../../src/http/plainUrl.js';
import { createListenHub } from '../subscriptions/listen.js';
import { buildToolCatalog } from '../tools/toolCatalog.js';

/** The surface's request handler, and how to end its subscription streams gracefully (shutdown). */
export type McpRouter = DoorHandler & {
  /**
   * Answers a request whose URL is of the plain form (src/http/plainUrl.ts) and whose path is under /mcp, from the
   * server's listener, without Express (the door reads nothing Express adds); returns false, touching nothing, for
   * any other. `guard` runs first on a request it takes (the body guard); `fail` gets what the door does not answer.
   */
  direct(req: IncomingMessage, res: ServerResponse, guard: Listener, fail: Fail): boolean;
  closeStreams(): Promise<void>;
  /** The server card (discovery.ts), made from the same tool catalog, for `GET /.well-known/mcp/server-card`. */
  serverCard: RequestHandler;
};

export interface McpRouterOptions {
  services: Services;
  rateLimiter: RateLimiter;
  /** The client's address, as Express's `req.ip` reads it. */
  clientIp: (req: IncomingMessage) => string;
}

/**
 * The MCP surface at /mcp (`app.use(createMcpRouter(…))`; it answers every path under /mcp and passes the
 * others on), stateless: every request carries its own credential, so a session would only add state to share
 * between processes. Three steps, each answering and auditing its own refusals:
 * - the door (door.ts): Origin, CORS, credential, method, toolsets, the bounded body;
 * - the message (body.ts): the JSON-RPC body against its revision headers;
 * - dispatch (dispatch.ts): tool scopes, then a plain tool call, a subscription stream (listen.ts), the SDK's
 *   2026-07-28 entry or a 2025 exchange.
 * Every procedure is a tool (toolCatalog.ts); every tool call runs the procedure pipeline.
 */
export function createMcpRouter({ services, rateLimiter, clientIp }: McpRouterOptions): McpRouter {
  const catalog = buildToolCatalog();
  const listen = createListenHub({ services, catalog });
  const dispatch = createDispatch({ services, rateLimiter, catalog, listen });
  const door = createDoor({ services, rateLimiter, catalog, clientIp }, async (req, res, entry) => {
    const message = readMessage(services, req, res, entry);
    if (!(message instanceof Promise)) await dispatch(res, entry, message);
    else await message;
  });
  const direct: McpRouter['direct'] = (req, res, guard, fail) => {
    const url = req.url!;
    if (!PLAIN_URL.test(url) || !isUnderMcp(pathOfUrl(url))) return false;
    guard(req, res);
    // (the door passes on only a path outside /mcp, which this is not)
    door(req, res, (err?: unknown) => fail(err ?? new Error('the MCP door passed on a path under /mcp'), req, res));
    return true;
  };
  return Object.assign(door, {
    direct,
    closeStreams: () => listen.closeAll(),
    serverCard: serverCardHandler(services.config.baseUrl, catalog),
  });
}
