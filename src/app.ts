import { createRequire } from 'node:module';
import { apiReference } from '@scalar/express-api-reference';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { createMcpRouter } from '../mcp/createMcpRouter.js';
import { createRestRouter } from '../rest/restRouter.js';
import { sendError } from '../rest/render.js';
import { requestIdFrom } from '../rest/requestId.js';
import type { RateLimiter } from './auth/rateLimit.js';
import { setAccessTokenResolver } from './auth/authenticate.js';
import { DomainError } from './domain/errors.js';
import type { Services } from './domain/services.js';
import { resolveAccessToken } from './oauth/resolveAccessToken.js';
import { createOAuthRouter } from './oauth/createOAuthRouter.js';
import { createWebRouter } from './web/createWebRouter.js';

export interface AppOptions {
  services: Services;
  rateLimiter: RateLimiter;
}

const require = createRequire(import.meta.url);

/** Security headers of every /v1 and /mcp answer (OWASP REST Security Cheat Sheet). */
const API_SECURITY_HEADERS: [string, string][] = [
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Referrer-Policy', 'no-referrer'],
];
const isApiPath = (p: string) => p === '/v1' || p.startsWith('/v1/') || p === '/mcp' || p.startsWith('/mcp/');

/** Composes the HTTP surface: health, REST /v1 with OpenAPI, the reference page. */
export function createApp({ services, rateLimiter }: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');
  // API answers are `no-store`: hashing every body for an ETag nobody can use is wasted work per request
  // (the OpenAPI document sets its own)
  app.set('etag', false);
  // Pages get helmet's full set; the JSON surfaces (/v1, /mcp) a fixed, shorter one fit for an API (no
  // HTML to protect, so the browser-rendering headers are dead weight on every call)
  const pageHeaders = helmet({ contentSecurityPolicy: false });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!isApiPath(req.path)) return pageHeaders(req, res, next);
    for (const [name, value] of API_SECURITY_HEADERS) res.setHeader(name, value);
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/docs/standalone.js', (_req, res) => {
    res.sendFile(require.resolve('@scalar/api-reference/browser/standalone.js'));
  });
  app.get(
    '/docs',
    apiReference({ url: '/v1/openapi.json', cdn: '/docs/standalone.js', pageTitle: 'svc API reference' } as Parameters<typeof apiReference>[0]),
  );

  // OAuth 2.1 authorization server and the sign-in pages; their access tokens authenticate on /v1 and /mcp
  setAccessTokenResolver(resolveAccessToken);
  // the API surfaces first (the busiest; their routers only answer paths under /v1 and /mcp)
  app.use(createRestRouter({ services, rateLimiter }));
  app.use('/mcp', createMcpRouter({ services, rateLimiter }));
  app.use(createOAuthRouter({ services }));
  app.use(createWebRouter({ services }));

  // Last resort: nothing escapes as a stack trace or an HTML error page.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const requestId = requestIdFrom(req.headers['x-request-id'] as string | undefined);
    services.log.error({ err, requestId }, 'unhandled error');
    if (res.headersSent) return res.destroy();
    const status = (err as { status?: number }).status;
    const e = status && status >= 400 && status < 500
      ? new DomainError('validation_error', 'Bad request', { status })
      : new DomainError('internal_error', 'Internal server error');
    sendError(res, e, requestId);
  });
  return app;
}
