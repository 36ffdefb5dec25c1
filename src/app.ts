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

const isMcpPath = (p: string) => p === '/mcp' || p.startsWith('/mcp/');

/** Composes the HTTP surface: health, REST /v1 with OpenAPI, the reference page. */
export function createApp({ services, rateLimiter }: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');
  // API answers are `no-store`: hashing every body for an ETag nobody can use is wasted work per request
  // (the OpenAPI document sets its own)
  app.set('etag', false);
  // The REST surface first (the busiest): it answers every path under /v1, each answer written with its
  // security headers in one writeHead (rest/render.ts), and passes everything else on.
  setAccessTokenResolver(resolveAccessToken);
  app.use(createRestRouter({ services, rateLimiter }));
  // Pages get helmet's full set; the MCP router sends the API's fixed, shorter one itself (mcp/createMcpRouter.ts)
  const pageHeaders = helmet({ contentSecurityPolicy: false });
  app.use((req: Request, res: Response, next: NextFunction) => (isMcpPath(req.path) ? next() : pageHeaders(req, res, next)));

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

  // MCP, then the OAuth 2.1 authorization server and the sign-in pages (their access tokens authenticate on
  // /v1 and /mcp: resolver set above)
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
