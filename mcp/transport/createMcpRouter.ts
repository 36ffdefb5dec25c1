import type { RequestHandler } from 'express';
import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Services } from '../../src/domain/services.js';
import { readMessage } from './body.js';
import { createDispatch } from '../tools/dispatch.js';
import { serverCardHandler } from '../discovery.js';
import { createDoor } from './door.js';
import { createListenHub } from '../subscriptions/listen.js';
import { buildToolCatalog } from '../tools/toolCatalog.js';

/** The surface's request handler, and how to end its subscription streams gracefully (shutdown). */
export type McpRouter = RequestHandler & {
  closeStreams(): Promise<void>;
  /** The server card (discovery.ts), made from the same tool catalog, for `GET /.well-known/mcp/server-card`. */
  serverCard: RequestHandler;
};

export interface McpRouterOptions {
  services: Services;
  rateLimiter: RateLimiter;
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
export function createMcpRouter({ services, rateLimiter }: McpRouterOptions): McpRouter {
  const catalog = buildToolCatalog();
  const listen = createListenHub({ services, catalog });
  const dispatch = createDispatch({ services, rateLimiter, catalog, listen });
  const door = createDoor({ services, rateLimiter, catalog }, async (req, res, entry) => {
    const message = await readMessage(services, req, res, entry);
    if (message) await dispatch(res, entry, message);
  });
  return Object.assign(door, {
    closeStreams: () => listen.closeAll(),
    serverCard: serverCardHandler(services.config.baseUrl, catalog),
  });
}
