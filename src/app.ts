import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { apiReference } from '@scalar/express-api-reference';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import proxyaddr from 'proxy-addr';
import { createMcpRouter } from '../mcp/transport/createMcpRouter.js';
import { createEventStreams } from '../rest/eventStream.js';
import { createEventFeed } from '../mcp/subscriptions/eventFeed.js';
import { SERVER_CARD_PATH } from '../mcp/discovery.js';
import { createRestRouter } from '../rest/restRouter.js';
import { sendError } from './http/render.js';
import { CACHE_CONTROL_HEADER, CONTENT_SECURITY_POLICY_HEADER, REQUEST_ID_IN } from './http/headers.js';
import { requestIdOf } from './http/requestId.js';
import { OPENAPI_JSON_PATH } from './http/surfaces.js';
import type { RateLimiter } from './auth/rateLimit.js';
import { DomainError } from './domain/errors.js';
import type { Services } from './domain/services.js';
import { createOAuthRouter } from './oauth/createOAuthRouter.js';
import { metricsEndpoint } from './observability/metricsEndpoint.js';
import { observeRequests } from './observability/observeRequests.js';
import { checkReadiness } from './observability/readiness.js';
import { createWebRouter } from './web/createWebRouter.js';
import { pageErrorHandler } from './web/pageErrorHandler.js';
import { ClientGoneError, createBodyGuard } from './readLimited.js';

export interface AppOptions {
  services: Services;
  rateLimiter: RateLimiter;
}

const require = createRequire(import.meta.url);

/** The renderer's single-file browser bundle (not among the package's exports: found beside its entry point). */
const DOCS_BUNDLE = path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/**
 * The reference page's configuration: the OpenAPI document and the bundle from this server; the vendor's
 * web fonts, request proxy, registry and telemetry off (the defaults reach fonts.scalar.com and
 * proxy.scalar.com); no button that opens the vendor's hosted client, no developer tools, no AI chat or MCP panel.
 */
const DOCS_CONFIG = {
  url: OPENAPI_JSON_PATH,
  cdn: '/docs/standalone.js',
  pageTitle: 'svc API reference',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  persistAuth: false,
  // none of the vendor's AI chat or MCP panel (they reach the vendor); the API-key scheme preselected for "try it"
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: 'apiKey' },
  externalUrls: { dashboardUrl: '', registryUrl: '', proxyUrl: '', apiBaseUrl: '' },
} as const;

/**
 * The reference page's Content-Security-Policy: the bundle and the inline start-up script by nonce, the
 * styles the renderer injects at run time (inline), the document and "try it" requests to this origin only.
 */
const docsPolicy = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; ` +
  `connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/**
 * Composes the HTTP surface: REST /v1 with OpenAPI, MCP at /mcp, health, the reference page, OAuth and the
 * pages. Returns the server's request listener: the app, observed, with `closeStreams` for shutdown.
 */
/** The server's request listener, and how to end its long-lived MCP streams before the server stops. */
export type App = RequestListener & { closeStreams(): Promise<void> };

export function createApp({ services, rateLimiter }: AppOptions): App {
  const app = express();
  app.disable('x-powered-by');
  // `req.ip`, the address every per-address counter uses, comes from X-Forwarded-For only when the operator
  // names the proxies (SVC_TRUST_PROXY); never merely because the peer is loopback
  app.set('trust proxy', services.config.trustProxy);
  app.set('query parser', 'simple');
  // API answers are `no-store`: hashing every body for an ETag nobody can use is wasted work per request
  // (the OpenAPI document sets its own)
  app.set('etag', false);
  // The API surfaces first (the busiest): REST answers every path under /v1 and MCP every path under /mcp,
  // each answer written with the API's security headers in one writeHead (src/http/render.ts, src/http/apiHeaders.ts);
  // both pass everything else on. (OAuth access tokens authenticate on both: `services.resolveAccessToken`,
  // src/runtime.ts.)
  const eventStreams = createEventStreams(services, () => createEventFeed(services));
  // the client's address exactly as Express's `req.ip` reads it (the same library and trust function), for the
  // requests the REST router answers without Express
  const trust = app.get('trust proxy fn') as Parameters<typeof proxyaddr>[1];
  const clientIp = (req: IncomingMessage) => proxyaddr(req, trust) ?? 'unknown';
  const rest = createRestRouter({ services, rateLimiter, eventStreams, clientIp });
  const mcp = createMcpRouter({ services, rateLimiter, clientIp });
  const api = (req: Request, res: Response, next: NextFunction) =>
    rest(req, res, (err?: unknown) => (err ? next(err) : mcp(req, res, next)));
  // Every request with a body first: its deadline and its client's count of bodies in flight (readLimited.ts)
  const guardBody = createBodyGuard({
    timeoutMs: services.config.bodyTimeoutMs,
    maxPendingPerClient: services.config.maxPendingBodies,
    clientOf: clientIp,
  });
  app.use((req, res, next) => {
    guardBody(req, res);
    next();
  });
  app.use(api);
  // MCP discovery: the server card, public, from the same tool catalog as /mcp (mcp/discovery.ts)
  app.get(SERVER_CARD_PATH, mcp.serverCard);
  // Pages get helmet's full set
  app.use(helmet({ contentSecurityPolicy: false }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // for load balancers: the database answers and its migrations are this code's (the process being up is /healthz)
  app.get('/readyz', async (_req, res) => {
    const r = await checkReadiness(services.ds);
    res.set(CACHE_CONTROL_HEADER, 'no-store');
    if (r.ready) res.json({ status: 'ready' });
    else res.status(503).json({ status: 'unavailable', reason: r.reason });
  });
  // Prometheus, only when SVC_METRICS_TOKEN is set (otherwise an unknown path like any other)
  if (services.metrics && services.config.metrics)
    app.get('/metrics', metricsEndpoint(services.metrics, services.config.metrics.token));

  // The API reference (Scalar): its bundle is served from here, and the page loads nothing from another host
  // (no web fonts, no registry or request proxy, no telemetry), under a policy that allows only what it uses.
  app.get('/docs/standalone.js', (_req, res) => {
    res.set(CACHE_CONTROL_HEADER, 'public, max-age=3600').sendFile(DOCS_BUNDLE);
  });
  app.get('/docs', (req, res) => {
    const nonce = randomBytes(16).toString('base64');
    res.set({ [CONTENT_SECURITY_POLICY_HEADER]: docsPolicy(nonce), [CACHE_CONTROL_HEADER]: 'no-store' });
    // (the handler reads nothing of the request: its type for it is narrower than a route's)
    const render = apiReference({ ...DOCS_CONFIG, nonce }) as unknown as (req: Request, res: Response) => void;
    render(req, res);
  });
  // browsers ask for it on every page: an empty answer instead of a 404
  app.get('/favicon.ico', (_req, res) => {
    res.set(CACHE_CONTROL_HEADER, 'public, max-age=86400').status(204).end();
  });

  // The OAuth 2.1 authorization server and the sign-in pages
  app.use(createOAuthRouter({ services, errorHandler: pageErrorHandler(services) }));
  app.use(createWebRouter({ services }));

  // Last resort: nothing escapes as a stack trace or an HTML error page.
  const lastResort = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdOf(req.headers[REQUEST_ID_IN] as string | undefined);
    // a client gone mid-request: nobody to answer, nothing went wrong here
    if (err instanceof ClientGoneError || res.destroyed) return res.destroy();
    const status = (err as { status?: number }).status;
    // a client's mistake (a 4xx the parser decided) is no server error: one line at info, no stack to flood the log
    if (status && status >= 400 && status < 500)
      services.log.info({ requestId, status, reason: (err as Error).message?.slice(0, 200) }, 'bad request');
    else services.log.error({ err, requestId }, 'unhandled error');
    if (res.headersSent) return res.destroy();
    const e =
      status && status >= 400 && status < 500
        ? new DomainError('validation_error', 'Bad request', { status })
        : new DomainError('internal_error', 'Internal server error');
    sendError(res, e, requestId);
  };
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => lastResort(err, req, res));

  // An operation of /v1 and a request to /mcp are answered straight from the server's listener, without Express's
  // router and its middleware walk (the routers' `direct`: the same handler, body guard and last resort as through
  // Express); everything else, and any request they do not take, goes to the app as before.
  const front = (req: IncomingMessage, res: ServerResponse) => {
    if (!rest.direct(req, res, guardBody, lastResort) && !mcp.direct(req, res, guardBody, lastResort)) app(req, res);
  };
  const listener = observeRequests(front, { metrics: services.metrics });
  // shutdown ends the long-lived streams first: MCP subscriptions and REST event streams
  const closeStreams = async () => {
    await Promise.all([mcp.closeStreams(), eventStreams.closeAll()]);
  };
  return Object.assign(listener, { closeStreams });
}
