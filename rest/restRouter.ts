import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { match as pathMatch, type MatchFunction } from 'path-to-regexp';
import { z } from 'zod';
import { recordAudit } from '../src/auth/audit.js';
import type { RateLimiter } from '../src/auth/rateLimit.js';
import { DomainError } from '../src/domain/errors.js';
import type { Services } from '../src/domain/services.js';
import { API_SECURITY_HEADERS, mergeHeaders } from '../src/http/apiHeaders.js';
import { auditRow } from '../src/http/auditRow.js';
import { clip } from '../src/http/inputBounds.js';
import {
  ALLOW_HEADER,
  API_KEY_IN,
  AUTHORIZATION_IN,
  CACHE_CONTROL_HEADER,
  CONTENT_DISPOSITION_HEADER,
  CONTENT_LENGTH_HEADER,
  CONTENT_TYPE_HEADER,
  CONTENT_TYPE_IN,
  ETAG_HEADER,
  IDEMPOTENCY_KEY_IN,
  LAST_EVENT_ID_IN,
  REPLAYED_HEADER,
  REQUEST_ID_IN,
} from '../src/http/headers.js';
import { restHeaders } from '../src/http/outcomeHeaders.js';
import { type Fail, type Listener, pathOfUrl, PLAIN_URL, queryOfUrl } from '../src/http/plainUrl.js';
import { sendError, sendJson } from '../src/http/render.js';
import { requestIdOf } from '../src/http/requestId.js';
import { OPENAPI_JSON_PATH, surfacePattern } from '../src/http/surfaces.js';
import { setOperation } from '../src/observability/observeRequests.js';
import { explainValidation } from '../src/procedures/validationHint.js';
import {
  listProcedures,
  newResponseState,
  toDomainError,
  type ProcedureInfo,
  type RequestContext,
} from '../src/procedures/index.js';
import { ClientGoneError, endForGoneClient } from '../src/readLimited.js';
import { parseJsonBody, readBody } from './body.js';
import type { EventStreams } from './eventStream.js';
import type { Actor } from '../src/domain/actor.js';
import { buildOpenApiDocument } from './openapi.js';
import { restBindingOf } from './restBinding.js';

export interface RestRouterOptions {
  services: Services;
  rateLimiter: RateLimiter;
  /** Serves `GET /v1/events/stream` once authorized. */
  eventStreams: EventStreams;
}

const JSON_BODY_LIMIT = 1024 * 1024;
const UNDER_V1 = new RegExp(`${surfacePattern('rest')}(\\/.*)?$`);
const OPENAPI_PATH = new RegExp(`^${OPENAPI_JSON_PATH.replace(/[/.]/g, '\\$&')}\\/?$`, 'i');
const OPENAPI_OPERATION = 'GET /v1/openapi.json';
const expressPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');
const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** Express's own decoding of a path parameter: a malformed percent-encoding is the client's error (400). */
function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw Object.assign(new URIError(`Failed to decode param '${value}'`), { status: 400, statusCode: 400 });
  }
}

/** One operation's route: its path pattern, its procedure, and its name in metrics and traces. */
interface Route {
  match: MatchFunction<Record<string, string>>;
  proc: ProcedureInfo;
  operation: string;
}

/** What the router holds for every request, built once. */
interface RouterState extends RestRouterOptions {
  /** The routes by method and first segment after /v1 (`routeKey`). */
  readonly routes: Map<string, Route[]>;
  /** Every route, to tell a known path with another method (405) from an unknown one (404). */
  readonly known: Route[];
  /** The query parameters each operation takes, and those of them that are integers. */
  readonly queryKeys: Map<ProcedureInfo, Set<string>>;
  readonly integerQueryKeys: Map<ProcedureInfo, Set<string>>;
  /** The OpenAPI document as served, and its ETag. */
  readonly openapi: string;
  readonly openapiEtag: string;
}

/**
 * What an operation's handler reads of its request besides the headers and the body: the path, the query as
 * Express's "simple" parser reads it, the client's address (`req.ip`), the path parameters. Express's
 * request and the plain one of the direct route (`RestRouter.direct`) both give it.
 */
interface RestCall {
  req: IncomingMessage;
  path: string;
  query: Record<string, unknown>;
  ip: string;
  params: Record<string, string>;
}

/**
 * The REST adapter as a middleware of the app (every path; what is not its own is passed on), and its direct
 * route for the server's listener: an operation's request answered without Express (`direct`).
 */
export type RestRouter = RequestHandler & {
  /**
   * Answers the request when its URL is an operation's path of the plain form (no character that would make
   * Express's URL parser take another way) and its method is the operation's; returns false, touching nothing,
   * for anything else (the OpenAPI document, unknown paths, malformed escapes), which the app answers. `guard`
   * runs first on a request it takes (the body guard); `fail` gets what the handler does not answer itself.
   */
  direct(req: IncomingMessage, res: ServerResponse, guard: Listener, fail: Fail): boolean;
};

const routeKey = (method: string, path: string) => `${method} ${path.split('/', 3)[2]?.toLowerCase() ?? ''}`;

/**
 * The routes grouped by method and first segment after /v1, so a request tries a handful of patterns instead of
 * walking every layer. Patterns match as Express routes do (case-insensitive, optional trailing slash, decoded
 * params, malformed percent-encoding a 400).
 */
function buildRoutes(procedures: ProcedureInfo[]): Map<string, Route[]> {
  const routes = new Map<string, Route[]>();
  for (const proc of procedures) {
    const key = routeKey(proc.meta.http.method, proc.meta.http.path);
    const match = pathMatch<Record<string, string>>(expressPath(proc.meta.http.path), {
      sensitive: false,
      end: true,
      trailing: true,
      decode: decodeParam,
    });
    // the operation's name in metrics and traces: its route template, never the concrete path
    const operation = `${proc.meta.http.method} ${proc.meta.http.path}`;
    routes.set(key, [...(routes.get(key) ?? []), { match, proc, operation }]);
  }
  return routes;
}

/**
 * The REST adapter: mounts every procedure at its `http` metadata under /v1, translating path, query and
 * body into the procedure's input and its result or error into HTTP. It adds no rule of its own.
 */
export function createRestRouter(
  options: RestRouterOptions & { clientIp: (req: IncomingMessage) => string },
): RestRouter {
  const procedures = listProcedures();
  const routes = buildRoutes(procedures);
  const openapi = JSON.stringify(buildOpenApiDocument(options.services.config.baseUrl));
  const state: RouterState = {
    ...options,
    routes,
    known: [...routes.values()].flat(),
    queryKeys: new Map(procedures.map((p) => [p, new Set(restBindingOf(p).query)])),
    integerQueryKeys: new Map(
      procedures.map((p) => [
        p,
        new Set(restBindingOf(p).query.filter((k) => isIntegerField(p.input.shape[k] as z.ZodType))),
      ]),
    ),
    openapi,
    openapiEtag: `"${createHash('sha256').update(openapi).digest('base64url').slice(0, 27)}"`,
  };

  // One dispatching middleware instead of a route per operation, and not an Express Router: every request of the
  // app passes through it, and a nested router costs each of them its own layer walk. HEAD is answered by the GET
  // route.
  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const candidates = routes.get(routeKey(method, path));
    for (const c of candidates ?? []) {
      let m: ReturnType<typeof c.match>;
      try {
        m = c.match(path);
      } catch {
        // a malformed percent-encoding is the client's mistake: a 400, and nothing for the error log
        answerMalformedPath(state.services, req, res, c.proc.meta.http.path).catch(next);
        return;
      }
      if (m) {
        setOperation(res, c.operation);
        const call = {
          req,
          path,
          query: req.query as Record<string, unknown>,
          ip: req.ip ?? 'unknown',
          params: m.params,
        };
        // (a failure the handler does not answer itself goes to the app's error path, never unhandled)
        handle(state, c.proc, call, res).catch(next);
        return;
      }
    }
    // (matched as an Express route would: any case, optional trailing slash)
    if (method === 'GET' && OPENAPI_PATH.test(path)) {
      setOperation(res, OPENAPI_OPERATION);
      return sendOpenApi(state, res);
    }
    if (!UNDER_V1.test(path)) return next();
    answerUnmatched(state, req, res).catch(next);
  };
  const direct: RestRouter['direct'] = (req, res, guard, fail) => {
    const url = req.url!;
    if (!PLAIN_URL.test(url)) return false;
    const path = pathOfUrl(url);
    const candidates = routes.get(routeKey(req.method === 'HEAD' ? 'GET' : req.method!, path));
    if (!candidates) return false;
    for (const c of candidates) {
      let m: ReturnType<typeof c.match>;
      try {
        m = c.match(path);
      } catch {
        return false;
      }
      if (!m) continue;
      guard(req, res);
      setOperation(res, c.operation);
      const call = { req, path, query: queryOfUrl(url), ip: options.clientIp(req), params: m.params };
      handle(state, c.proc, call, res).catch((err: unknown) => fail(err, req, res));
      return true;
    }
    return false;
  };
  return Object.assign(middleware, { direct });
}

function sendOpenApi({ openapi, openapiEtag }: RouterState, res: Response): void {
  res
    .set({ ...API_SECURITY_HEADERS, [CACHE_CONTROL_HEADER]: 'public, max-age=300', [ETAG_HEADER]: openapiEtag })
    .type('application/json')
    .send(openapi);
}

/** One operation's request: its input from path, query and body, the procedure called, its answer. */
async function handle(state: RouterState, proc: ProcedureInfo, call: RestCall, res: ServerResponse) {
  const { services, rateLimiter, eventStreams } = state;
  const { req } = call;
  const requestId = requestIdOf(header(req, REQUEST_ID_IN));
  const { http } = proc.meta;
  const ctx: RequestContext = {
    services,
    rateLimiter,
    surface: 'rest',
    requestId,
    method: req.method!,
    path: call.path,
    routePattern: http.path,
    clientIp: call.ip,
    credentials: { authorization: header(req, AUTHORIZATION_IN), apiKey: header(req, API_KEY_IN) },
    idempotencyKey: header(req, IDEMPOTENCY_KEY_IN),
    out: newResponseState(),
  };
  const query = call.query;
  // a query parameter the document does not name is refused, as an unknown body field is (never silently
  // ignored, nor taken for a body field or a path parameter)
  const unknownKeys = Object.keys(query).filter((k) => !state.queryKeys.get(proc)!.has(k));
  if (unknownKeys.length) ctx.inputError = unknownQueryParameters(unknownKeys);
  else ctx.inputError = queryProblem(req.url!, query, state.integerQueryKeys.get(proc)!);
  let input: Record<string, unknown> = {};
  for (const k in query) if (!unknownKeys.includes(k)) input[k] = query[k];
  // an integer parameter travels as its decimal digits (checked above): the schema reads a number
  for (const k of state.integerQueryKeys.get(proc)!)
    if (typeof input[k] === 'string' && DECIMAL.test(input[k])) input[k] = Number(input[k]);
  if (http.method !== 'GET') {
    const limit = http.rawBody ? services.config.maxUploadBytes : JSON_BODY_LIMIT;
    let read: Awaited<ReturnType<typeof readBody>>;
    try {
      read = await readBody(req, limit);
    } catch (err) {
      if (err instanceof ClientGoneError) return endForGoneClient(res);
      throw err;
    }
    if ('error' in read) ctx.inputError ??= read.error;
    else if (http.rawBody) {
      input[http.rawBody.field] = read.bytes.toString('base64');
      input[http.rawBody.contentTypeField] = header(req, CONTENT_TYPE_IN) ?? 'application/octet-stream';
    } else {
      const parsed = parseJsonBody(req, read.bytes);
      if ('error' in parsed) ctx.inputError ??= parsed.error;
      else input = { ...parsed.value, ...input };
    }
  }
  Object.assign(input, call.params);
  // an event stream resumes where the client's EventSource says it left off
  const lastEventId = http.stream ? header(req, LAST_EVENT_ID_IN) : undefined;
  if (lastEventId !== undefined && input.lastEventId === undefined) input.lastEventId = lastEventId;
  try {
    const data = await proc.call({ ctx, getRawInput: async () => input, signal: undefined });
    // the headers of what the pipeline recorded (the renderers below copy them once into the answer's)
    const headers = restHeaders(ctx.out, services.config.baseUrl, requestId);
    if (http.download && ctx.out.download && !headers[REPLAYED_HEADER])
      return streamFile(res, ctx.out.download, headers);
    if (http.stream && ctx.out.eventStream) {
      const { actor } = ctx as RequestContext & { actor: Actor };
      return eventStreams.serve(res, ctx.out.eventStream, actor, ctx.credentials, headers);
    }
    sendJson(res, ctx.out.status ?? http.successStatus ?? 200, data, headers);
  } catch (err) {
    // an argument's problem with a valid example, as MCP says it
    const e = explainValidation(toDomainError(err), proc);
    if (e.status >= 500) services.log.error({ err, requestId, route: http.path }, 'request failed');
    sendError(res, e, requestId, restHeaders(ctx.out, services.config.baseUrl, requestId));
  }
}

/**
 * A path whose percent-encoding is malformed (`/v1/rooms/%ZZ`): 400 in the envelope, audited, logged at debug only.
 */
async function answerMalformedPath(services: Services, req: Request, res: Response, routePattern: string) {
  const requestId = requestIdOf(header(req, REQUEST_ID_IN));
  const err = new DomainError('validation_error', 'The path holds a malformed percent-encoding', {
    details: { reason: 'malformed_path' },
  });
  services.log.debug({ requestId, route: routePattern }, 'malformed percent-encoding in a path');
  req.resume();
  await recordAudit(
    services,
    auditRow(
      {
        requestId,
        surface: 'rest',
        method: req.method,
        routePattern,
        statusCode: err.status,
        units: 0,
        errorCode: err.code,
      },
      undefined,
    ),
  );
  sendError(res, err, requestId);
}

/** Whether a route's pattern matches the path (a malformed escape matches nothing). */
function matchesPath(c: Route, path: string): boolean {
  try {
    return c.match(path) !== false;
  } catch {
    return false;
  }
}

/**
 * Anything else under /v1: 405 on a known path with another method, else 404. Both are audited. (The dispatcher's
 * own patterns, so a path is "known" exactly when some method of it would be served.)
 */
async function answerUnmatched({ services, known }: RouterState, req: Request, res: Response) {
  const requestId = requestIdOf(header(req, REQUEST_ID_IN));
  const matches = known.filter((c) => matchesPath(c, req.path));
  const err = matches.length
    ? new DomainError('method_not_allowed', `Method ${req.method} is not allowed here`, {
        details: { allowed: matches.map((m) => m.proc.meta.http.method) },
      })
    : new DomainError('not_found', 'No such endpoint');
  const headers: Record<string, string> = matches.length
    ? { [ALLOW_HEADER]: matches.map((m) => m.proc.meta.http.method).join(', ') }
    : {};
  req.resume();
  await recordAudit(
    services,
    auditRow(
      {
        requestId,
        surface: 'rest',
        method: req.method,
        routePattern: matches[0]?.proc.meta.http.path ?? '(unmatched)',
        statusCode: err.status,
        units: 0,
        errorCode: err.code,
      },
      undefined,
    ),
  );
  sendError(res, err, requestId, headers);
}

/** Unknown query parameters named in an error: a few, each cut short (the rest are counted). */
const SHOWN_KEYS = 5;

/** 400 `validation_error` for query parameters the operation does not take, in the shape of zod's own issue. */
function unknownQueryParameters(keys: string[]): DomainError {
  const shown = keys.slice(0, SHOWN_KEYS).map((k) => clip(k, 64));
  const more = keys.length > SHOWN_KEYS ? ` (and ${keys.length - SHOWN_KEYS} more)` : '';
  const message = `Unrecognized query parameter${keys.length > 1 ? 's' : ''}: ${shown.map((k) => JSON.stringify(k)).join(', ')}${more}`;
  return new DomainError('validation_error', 'Invalid input', {
    details: {
      issues: [
        { path: '', code: 'unrecognized_keys', message, keys: shown, ...(more ? { keyCount: keys.length } : {}) },
      ],
    },
  });
}

/** A query value of an integer parameter: decimal digits only (no sign, exponent, point, hex, or space). */
const DECIMAL = /^[0-9]+$/;

/** Whether a field of an input schema is an integer (`limit`), optional or not. */
function isIntegerField(schema: z.ZodType | undefined): boolean {
  let s = schema as z.ZodType | undefined;
  while (s && (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault))
    s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodNumber;
}

/**
 * What is wrong with the query string, beyond its names: a parameter given twice (`limit=5&limit=6`), an integer
 * parameter that is not plain decimal digits (`1e2`, `0x10`, `+5`, ` 5`), or a percent-encoding that is not UTF-8
 * (`%FF`, which the query parser would read as U+FFFD: the client's text silently changed). Undefined when fine.
 */
function queryProblem(url: string, query: Record<string, unknown>, integers: Set<string>): DomainError | undefined {
  const issues: { path: string; code: string; message: string }[] = [];
  for (const k in query) {
    const v = query[k];
    if (Array.isArray(v))
      issues.push({ path: k, code: 'invalid_type', message: 'is given more than once; give it once' });
    else if (integers.has(k) && typeof v === 'string' && !DECIMAL.test(v))
      issues.push({ path: k, code: 'invalid_type', message: 'must be a decimal integer (digits only)' });
  }
  const q = url.indexOf('?');
  if (q >= 0 && url.includes('%', q)) {
    for (const part of url.slice(q + 1).split('&')) {
      try {
        decodeURIComponent(part.replace(/\+/g, ' '));
      } catch {
        const name = part.split('=', 1)[0];
        issues.push({
          path: clip(safeDecode(name), 64),
          code: 'invalid_format',
          message: 'is not percent-encoded UTF-8',
        });
      }
    }
  }
  if (!issues.length) return undefined;
  const shown = issues.slice(0, SHOWN_KEYS);
  return new DomainError(
    'validation_error',
    `Invalid input: ${shown.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { details: { issues: shown } },
  );
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

function streamFile(
  res: ServerResponse,
  f: NonNullable<RequestContext['out']['download']>,
  headers: Record<string, string>,
) {
  res.writeHead(
    200,
    mergeHeaders(API_SECURITY_HEADERS, headers, {
      [CONTENT_TYPE_HEADER]: f.contentType,
      [CONTENT_LENGTH_HEADER]: String(f.size),
      [CONTENT_DISPOSITION_HEADER]: `attachment; filename*=UTF-8''${encodeURIComponent(f.filename)}`,
      [ETAG_HEADER]: `"${f.sha256}"`,
      [CACHE_CONTROL_HEADER]: 'private, no-store',
    }),
  );
  const stream = fs.createReadStream(f.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
