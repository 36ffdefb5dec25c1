import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { Credentials } from '../../src/auth/credentials.js';
import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Actor, AuthenticatedActor } from '../../src/domain/actor.js';
import { DomainError } from '../../src/domain/errors.js';
import type { Services } from '../../src/domain/services.js';
import { API_SECURITY_HEADERS, headersAtWriteHead } from '../../src/http/apiHeaders.js';
import {
  ACCEPT_HEADER,
  ALLOW_HEADER,
  API_KEY_HEADER,
  API_KEY_IN,
  AUTHORIZATION_HEADER,
  AUTHORIZATION_IN,
  CONTENT_TYPE_HEADER,
  EXPOSED_API_HEADERS,
  LAST_EVENT_ID_HEADER,
  MCP_METHOD_HEADER,
  MCP_NAME_HEADER,
  MCP_PROTOCOL_VERSION_HEADER,
  MCP_READONLY_HEADER,
  MCP_SESSION_ID_HEADER,
  MCP_TOOLSETS_HEADER,
  ORIGIN_HEADER,
  ORIGIN_IN,
  REQUEST_ID_HEADER,
  REQUEST_ID_IN,
  VARY_HEADER,
  WWW_AUTHENTICATE,
} from '../../src/http/headers.js';
import { pathOfUrl, queryOfUrl } from '../../src/http/plainUrl.js';
import { requestIdOf } from '../../src/http/requestId.js';
import { MCP_SCOPE, SURFACES, surfacePattern } from '../../src/http/surfaces.js';
import { setOperation } from '../../src/observability/observeRequests.js';
import { ClientGoneError, endForGoneClient } from '../../src/readLimited.js';
import { auditEndpointRejection, auditRejection } from './auditRejection.js';
import { authenticateMcp } from './authenticateMcp.js';
import { JSONRPC_PARSE_ERROR, JSONRPC_SERVER_ERROR, sendEnvelope, sendJsonRpcError } from './httpReplies.js';
import { createOriginPolicy } from './originPolicy.js';
import { readMcpBody } from './readMcpBody.js';
import { RPC_INVALID_PARAMS } from '../server/rpcError.js';
import type { ToolCatalog } from '../tools/toolCatalog.js';
import { parseToolSelection, selectTools, type ToolSelection } from '../tools/toolsets.js';

/** A POST that passed the door: who sent it, the tools its connection selected, and its parsed JSON body. */
export interface Entry {
  requestId: string;
  credentials: Credentials;
  actor: AuthenticatedActor;
  clientIp: string;
  selection: ToolSelection;
  tools: ToolCatalog;
  body: unknown;
  /** The answer's headers, written with its one writeHead (headersAtWriteHead). */
  headers: Record<string, string>;
}

export interface DoorOptions {
  services: Services;
  rateLimiter: RateLimiter;
  catalog: ToolCatalog;
  /** The client's address, as Express's `req.ip` reads it (the app's trust function). */
  clientIp: (req: IncomingMessage) => string;
}

/**
 * The door as a Node request handler: Express mounts it (`next` passes on what is not under /mcp), and the server's
 * listener calls it straight for a plain URL under /mcp. It reads nothing Express adds to the request or response.
 */
export type DoorHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** Headers a browser-based MCP client sends and must be able to read (MCP transport, authorization). */
const CORS_OPTIONS: cors.CorsOptions = {
  origin: true, // the Origin was validated just before; reflect it
  methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: [
    AUTHORIZATION_HEADER,
    CONTENT_TYPE_HEADER,
    ACCEPT_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_SESSION_ID_HEADER,
    LAST_EVENT_ID_HEADER,
    API_KEY_HEADER,
    REQUEST_ID_HEADER,
    MCP_TOOLSETS_HEADER,
    MCP_READONLY_HEADER,
  ],
  exposedHeaders: [WWW_AUTHENTICATE, MCP_SESSION_ID_HEADER, MCP_PROTOCOL_VERSION_HEADER, ...EXPOSED_API_HEADERS],
  maxAge: 600,
};

/** A request header by its lower-case name (a `*_IN` constant, computed once), repeated values joined. */
export const headerOf = (req: IncomingMessage, name: Lowercase<string>): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/**
 * The endpoint, and everything below it (matched as an Express mount path would be: any case, optional trailing
 * slash).
 */
const MCP_ENDPOINT = new RegExp(`${surfacePattern('mcp')}\\/?$`, 'i');
const UNDER_MCP = new RegExp(`${surfacePattern('mcp')}(?:\\/|$)`, 'i');

/** Whether a path is the MCP endpoint or below it: what the door answers rather than passes on. */
export const isUnderMcp = (path: string): boolean => UNDER_MCP.test(path);

/** The path Express reads (`req.path`, which parses an absolute-form URL too), else the plain URL's. */
const pathOf = (req: IncomingMessage): string => (req as { path?: string }).path ?? pathOfUrl(req.url!);

/** The headers every answer of /mcp starts from (copied for each by headersAtWriteHead). */
const ANSWER_HEADERS: Readonly<Record<string, string>> = { ...API_SECURITY_HEADERS, [VARY_HEADER]: ORIGIN_HEADER };

/** The endpoint's operation by HTTP method, until the body names a better one. */
const ENDPOINT_OPERATIONS: Record<string, string> = Object.fromEntries(
  ['GET', 'POST', 'DELETE', 'OPTIONS'].map((m) => [m, `${m} ${SURFACES.mcp.path}`]),
);

/**
 * The HTTP side of /mcp, everything decided before a JSON-RPC message is looked at: the Origin policy and
 * CORS, the credential (and its challenge), the method, the toolset selection, and the bounded body. Every
 * refusal here is answered and audited here; what passes goes to `inside` as an Entry. Paths below /mcp are
 * answered 404, any other path is passed on.
 */
export function createDoor(
  { services, rateLimiter, catalog, clientIp }: DoorOptions,
  inside: (req: IncomingMessage, res: ServerResponse, entry: Entry) => Promise<void>,
): DoorHandler {
  const door: DoorState = {
    services,
    rateLimiter,
    catalog,
    clientIp,
    inside,
    // the 401 challenge's scope: what a client asks for to start, so that every tool is within reach
    challengeScope: [
      ...new Set([MCP_SCOPE, ...[...catalog.values()].flatMap((e) => (e.proc.meta.scope ? [e.proc.meta.scope] : []))]),
    ].join(' '),
    bodyLimit: Math.ceil((services.config.maxUploadBytes * 4) / 3) + 1024 * 1024, // upload_file carries base64
  };
  const originAllowed = createOriginPolicy(services.config);
  // CORS headers are for browsers, which always send Origin on these requests; other clients ignore them
  const corsHeaders = cors(CORS_OPTIONS);

  // One middleware function, not an Express Router with a layer per step: a tool call pays for each.
  return (req, res, next) => {
    const path = pathOf(req);
    if (!UNDER_MCP.test(path)) return next();
    // Every answer of /mcp carries the API security headers; they, the request id and the tool call's
    // rate-limit and unit headers go into the one writeHead of the answer (the SDK's transport writes it).
    const headers = headersAtWriteHead(res, ANSWER_HEADERS);
    // The MCP transport asks for Origin to be validated on every request, preflights included (DNS rebinding).
    const origin = headerOf(req, ORIGIN_IN);
    if (!originAllowed(origin)) {
      req.resume();
      refuse(services, req, res, {
        requestId: requestIdOf(headerOf(req, REQUEST_ID_IN)),
        error: new DomainError('forbidden', 'Origin not allowed', { details: { origin } }),
      }).catch(next);
      return;
    }
    const serve = (): void => {
      (MCP_ENDPOINT.test(path) ? enter(door, req, res, headers) : answerUnmatched(services, req, res)).catch(next);
    };
    if (origin === undefined) return serve();
    corsHeaders(req, res, (err?: unknown) => (err ? next(err) : serve()));
  };
}

/** What the door of /mcp holds for every request, built once. */
interface DoorState extends DoorOptions {
  readonly inside: (req: IncomingMessage, res: ServerResponse, entry: Entry) => Promise<void>;
  /** The 401 challenge's scope. */
  readonly challengeScope: string;
  /** The most a body may hold. */
  readonly bodyLimit: number;
}

/** A refusal at the door: logged when it is the server's failure, audited, and answered with the envelope. */
async function refuse(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  o: { requestId: string; error: DomainError; headers?: Record<string, string>; actor?: Actor },
): Promise<void> {
  if (o.error.status >= 500)
    services.log.error({ err: o.error.cause ?? o.error, requestId: o.requestId }, 'mcp request failed');
  await auditEndpointRejection(services, {
    requestId: o.requestId,
    method: req.method!,
    statusCode: o.error.status,
    errorCode: o.error.code,
    actor: o.actor,
  });
  sendEnvelope(res, o.error, o.requestId, o.headers);
}

/** The endpoint itself: the credential, the method, the toolset selection and the body, then `inside`. */
async function enter(
  door: DoorState,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): Promise<void> {
  const { services, rateLimiter, catalog, challengeScope } = door;
  const method = req.method!;
  setOperation(res, ENDPOINT_OPERATIONS[method] ?? 'unmatched');
  const requestId = requestIdOf(headerOf(req, REQUEST_ID_IN));
  const credentials: Credentials = {
    authorization: headerOf(req, AUTHORIZATION_IN),
    apiKey: headerOf(req, API_KEY_IN),
  };
  const clientIp = door.clientIp(req);
  const authenticated = await authenticateMcp({ services, rateLimiter, credentials, clientIp, challengeScope });
  if ('error' in authenticated) {
    req.resume();
    return refuse(services, req, res, { requestId, ...authenticated });
  }
  const { actor } = authenticated;
  const refused = (statusCode: number, errorCode: string) =>
    auditEndpointRejection(services, { requestId, method, statusCode, errorCode, actor });
  if (method !== 'POST') {
    // stateless: no standalone SSE stream (GET) and no session to end (DELETE), as the SDK's stateless examples.
    // Clients probe GET after every initialize (the transport lets the server answer 405): that probe is
    // protocol negotiation, not a refusal, and is not audited; any other method is.
    req.resume();
    if (method !== 'GET') await refused(405, 'method_not_allowed');
    return sendJsonRpcError(res, 405, JSONRPC_SERVER_ERROR, 'Method not allowed.', {
      [ALLOW_HEADER]: 'POST',
      [REQUEST_ID_HEADER]: requestId,
    });
  }

  // the connection's selection of tools, from its headers or query (toolsets.ts)
  const selection = parseToolSelection(req.headers, queryOfUrl(req.url!));
  if ('error' in selection) {
    req.resume();
    await refused(400, 'validation_error');
    return sendJsonRpcError(res, 400, RPC_INVALID_PARAMS, selection.error, { [REQUEST_ID_HEADER]: requestId });
  }

  let read: Awaited<ReturnType<typeof readMcpBody>>;
  try {
    read = await readMcpBody(req, door.bodyLimit);
  } catch (err) {
    if (err instanceof ClientGoneError) return endForGoneClient(res);
    throw err;
  }
  if ('error' in read) {
    await refused(read.status, read.code);
    const code = read.status === 400 ? JSONRPC_PARSE_ERROR : JSONRPC_SERVER_ERROR;
    return sendJsonRpcError(res, read.status, code, read.error, { ...read.headers, [REQUEST_ID_HEADER]: requestId });
  }
  if (read.body === null) {
    // not application/json (readMcpBody leaves it unparsed): refused as the SDK's transports refuse it
    await refused(415, 'unsupported_media_type');
    const message = 'Unsupported Media Type: Content-Type must be application/json';
    return sendJsonRpcError(res, 415, JSONRPC_SERVER_ERROR, message, { [REQUEST_ID_HEADER]: requestId });
  }

  const tools = selectTools(catalog, selection);
  await door.inside(req, res, { requestId, credentials, actor, clientIp, selection, tools, body: read.body, headers });
}

/** A path below /mcp that is not the endpoint: 404, audited. */
async function answerUnmatched(services: Services, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = requestIdOf(headerOf(req, REQUEST_ID_IN));
  req.resume();
  await auditRejection(services, {
    requestId,
    method: req.method!,
    routePattern: '(unmatched)',
    statusCode: 404,
    errorCode: 'not_found',
  });
  const message = `Not found: the MCP endpoint is ${SURFACES.mcp.path}`;
  sendJsonRpcError(res, 404, JSONRPC_SERVER_ERROR, message, { [REQUEST_ID_HEADER]: requestId });
}
