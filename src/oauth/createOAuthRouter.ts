import cors from 'cors';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type Response,
  type Router,
} from 'express';
import type { Services } from '../domain/services.js';
import { formBody } from '../formBody.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';
import { OAuthError, sendOAuthError } from './OAuthError.js';
import { revokeEndpoint } from './revokeEndpoint.js';
import { tokenEndpoint } from './tokenEndpoint.js';
import { resourceMetadataPath } from '../http/surfaces.js';
import {
  AUTHORIZATION_HEADER,
  CACHE_CONTROL_HEADER,
  CONTENT_TYPE_HEADER,
  MCP_PROTOCOL_VERSION_HEADER,
  RETRY_AFTER,
  WWW_AUTHENTICATE,
} from '../http/headers.js';

export interface OAuthRouterOptions {
  services: Services;
  /**
   * The last handler of errors these endpoints do not answer themselves (a body that failed past the form
   * parser's refusals): the pages' error handler, which the composition root passes in (oauth/ renders no page).
   */
  errorHandler: ErrorRequestHandler;
}

/**
 * CORS of the endpoints a browser-based client (the MCP Inspector's web UI) calls from its own origin:
 * any origin, no credentials mode (no cookies are involved: these endpoints
 * authenticate by parameters and PKCE), the headers such clients send. Never on the pages or
 * /oauth/authorize, which a browser navigates to.
 */
const BROWSER_CLIENT_CORS: cors.CorsOptions = {
  origin: '*',
  credentials: false,
  allowedHeaders: [AUTHORIZATION_HEADER, CONTENT_TYPE_HEADER, MCP_PROTOCOL_VERSION_HEADER],
  exposedHeaders: [WWW_AUTHENTICATE, RETRY_AFTER],
  maxAge: 600,
};

/**
 * The OAuth 2.1 authorization server's machine endpoints: discovery (RFC 8414, RFC 9728 for /v1
 * and /mcp), /oauth/token and /oauth/revoke, all callable cross-origin (CORS without credentials). The
 * endpoints a browser navigates to, /oauth/authorize and /oauth/consent, are web/'s pages over oauth/'s rules.
 */
export function createOAuthRouter({ services, errorHandler }: OAuthRouterOptions): Router {
  const r = express.Router();
  const { baseUrl } = services.config;
  const form = formBody();
  const anyOrigin = cors({ ...BROWSER_CLIENT_CORS, methods: ['GET'] });
  const anyOriginPost = cors({ ...BROWSER_CLIENT_CORS, methods: ['POST'] });
  const metadata = (path: string, body: object) => {
    r.options(path, anyOrigin);
    r.get(path, anyOrigin, (_req, res) => {
      res.set(CACHE_CONTROL_HEADER, 'public, max-age=300').json(body);
    });
  };
  metadata('/.well-known/oauth-authorization-server', authorizationServerMetadata(baseUrl));
  metadata(resourceMetadataPath('rest'), protectedResourceMetadata(baseUrl, 'rest'));
  metadata(resourceMetadataPath('mcp'), protectedResourceMetadata(baseUrl, 'mcp'));

  // a body the form parser refuses (too large, bad charset) is an RFC 6749 invalid_request there; one that did
  // not arrive in time keeps its 408, one over the client's limit of bodies in flight its 429
  const oauthBodyErrors = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (err as { status?: number }).status;
    if (!status || status >= 500) return next(err);
    if (status === 408)
      return sendOAuthError(res, new OAuthError('invalid_request', 'The request body did not arrive in time', {}, 408));
    if (status === 429)
      return sendOAuthError(
        res,
        new OAuthError('invalid_request', 'Too many requests in flight; retry shortly', { [RETRY_AFTER]: '1' }, 429),
      );
    sendOAuthError(res, new OAuthError('invalid_request', 'The request body could not be read'));
  };
  r.options('/oauth/token', anyOriginPost);
  r.options('/oauth/revoke', anyOriginPost);
  r.post('/oauth/token', anyOriginPost, form, tokenEndpoint({ services }), oauthBodyErrors);
  r.post('/oauth/revoke', anyOriginPost, form, revokeEndpoint({ services }), oauthBodyErrors);
  r.use(errorHandler);
  return r;
}
