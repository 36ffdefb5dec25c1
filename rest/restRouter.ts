import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { match as pathMatch, type MatchFunction } from 'path-to-regexp';
import { recordAudit } from '../src/auth/audit.js';
import type { RateLimiter } from '../src/auth/rateLimit.js';
import { DomainError } from '../src/domain/errors.js';
import type { Services } from '../src/domain/services.js';
import { API_SECURITY_HEADERS, mergeHeaders } from '../src/http/apiHeaders.js';
import { auditRow } from '../src/http/auditRow.js';
import { REPLAYED_HEADER, restHeaders } from '../src/http/headers.js';
import { sendError, sendJson } from '../src/http/render.js';
import { requestIdOf } from '../src/http/requestId.js';
import { setOperation } from '../src/observability/observeRequests.js';
import { explainValidation } from '../src/procedures/validationHint.js';
import {
  listProcedures, newResponseState, toDomainError, type ProcedureInfo, type RequestContext,
} from '../src/procedures/index.js';
import { ClientGoneError, endForGoneClient } from '../src/readLimited.js';
import { parseJsonBody, readBody } from './body.js';
import { buildOpenApiDocument } from './openapi.js';
import { restBindingOf } from './restBinding.js';

export interface RestRouterOptions {
  services: Services;
  rateLimiter: RateLimiter;
}

const JSON_BODY_LIMIT = 1024 * 1024;
const UNDER_V1 = /^\/v1(\/.*)?$/;
const OPENAPI_PATH = /^\/v1\/openapi\.json\/?$/i;
const OPENAPI_OPERATION = 'GET /v1/openapi.json';
const expressPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');
const header = (req: Request, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/**
 * The REST adapter: mounts every procedure at its `http` metadata under /v1, translating path, query and
 * body into the procedure's input and its result or error into HTTP. It adds no rule of its own.
 */
/** Express's own decoding of a path parameter: a malformed percent-encoding is the client's error (400). */
function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw Object.assign(new URIError(`Failed to decode param '${value}'`), { status: 400, statusCode: 400 });
  }
}

export function createRestRouter({ services, rateLimiter }: RestRouterOptions): RequestHandler {
  const openapi = JSON.stringify(buildOpenApiDocument(services.config.baseUrl));
  const openapiEtag = `"${createHash('sha256').update(openapi).digest('base64url').slice(0, 27)}"`;
  const sendOpenApi = (res: Response) => {
    res.set({ ...API_SECURITY_HEADERS, 'Cache-Control': 'public, max-age=300', ETag: openapiEtag }).type('application/json').send(openapi);
  };

  // One dispatching middleware instead of a route per operation: the routes are grouped by method and
  // first segment after /v1, so a request tries a handful of patterns instead of walking every layer.
  // Patterns match as Express routes do (case-insensitive, optional trailing slash, decoded params,
  // malformed percent-encoding a 400); HEAD is answered by the GET route.
  const procedures = listProcedures();
  const routeKey = (method: string, path: string) => `${method} ${path.split('/', 3)[2]?.toLowerCase() ?? ''}`;
  const routes = new Map<string, { match: MatchFunction<Record<string, string>>; proc: ProcedureInfo; operation: string }[]>();
  const queryKeys = new Map(procedures.map((p) => [p, new Set(restBindingOf(p).query)]));
  for (const proc of procedures) {
    const key = routeKey(proc.meta.http.method, proc.meta.http.path);
    const match = pathMatch<Record<string, string>>(expressPath(proc.meta.http.path), { sensitive: false, end: true, trailing: true, decode: decodeParam });
    // the operation's name in metrics and traces: its route template, never the concrete path
    const operation = `${proc.meta.http.method} ${proc.meta.http.path}`;
    routes.set(key, [...(routes.get(key) ?? []), { match, proc, operation }]);
  }
  // One middleware function, not an Express Router: every request of the app passes through it, and a
  // nested router costs each of them its own layer walk.
  const dispatch = (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const candidates = routes.get(routeKey(method, path));
    for (const c of candidates ?? []) {
      let m: ReturnType<typeof c.match>;
      try {
        m = c.match(path);
      } catch (err) {
        return next(err);
      }
      if (m) {
        req.params = m.params;
        setOperation(res, c.operation);
        // (a failure the handler does not answer itself goes to the app's error path, never unhandled)
        handle(c.proc, req, res).catch(next);
        return;
      }
    }
    // (matched as an Express route would: any case, optional trailing slash)
    if (method === 'GET' && OPENAPI_PATH.test(path)) {
      setOperation(res, OPENAPI_OPERATION);
      return sendOpenApi(res);
    }
    if (!UNDER_V1.test(path)) return next();
    answerUnmatched(req, res).catch(next);
  };

  async function handle(proc: ProcedureInfo, req: Request, res: Response) {
    const requestId = requestIdOf(header(req, 'x-request-id'));
    const { http } = proc.meta;
    const ctx: RequestContext = {
      services, rateLimiter, surface: 'rest', requestId, method: req.method, path: req.path, routePattern: http.path,
      clientIp: req.ip ?? 'unknown',
      credentials: { authorization: header(req, 'authorization'), apiKey: header(req, 'x-api-key') },
      idempotencyKey: header(req, 'idempotency-key'), out: newResponseState(),
    };
    const query = req.query as Record<string, unknown>;
    // a query parameter the document does not name is refused, as an unknown body field is (never silently
    // ignored, nor taken for a body field or a path parameter)
    const unknownKeys = Object.keys(query).filter((k) => !queryKeys.get(proc)!.has(k));
    if (unknownKeys.length) ctx.inputError = unknownQueryParameters(unknownKeys);
    let input: Record<string, unknown> = {};
    for (const k in query) if (!unknownKeys.includes(k)) input[k] = query[k];
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
        input[http.rawBody.contentTypeField] = header(req, 'content-type') ?? 'application/octet-stream';
      } else {
        const parsed = parseJsonBody(req, read.bytes);
        if ('error' in parsed) ctx.inputError ??= parsed.error;
        else input = { ...parsed.value, ...input };
      }
    }
    Object.assign(input, req.params);
    try {
      const data = await proc.call({ ctx, getRawInput: async () => input, signal: undefined });
      // the headers of what the pipeline recorded (the renderers below copy them once into the answer's)
      const headers = restHeaders(ctx.out, services.config.baseUrl, requestId);
      if (http.download && ctx.out.download && !headers[REPLAYED_HEADER]) return streamFile(res, ctx.out.download, headers);
      sendJson(res, ctx.out.status ?? http.successStatus ?? 200, data, headers);
    } catch (err) {
      const e = explainValidation(toDomainError(err), proc); // an argument's problem with a valid example, as MCP says it
      if (e.status >= 500) services.log.error({ err, requestId, route: http.path }, 'request failed');
      sendError(res, e, requestId, restHeaders(ctx.out, services.config.baseUrl, requestId));
    }
  }

  // Anything else under /v1: 405 on a known path with another method, else 404. Both are audited.
  // (the dispatcher's own patterns, so a path is "known" exactly when some method of it would be served)
  const known = [...routes.values()].flat();
  const matchesPath = (c: (typeof known)[number], path: string) => {
    try {
      return c.match(path) !== false;
    } catch {
      return false; // a malformed escape matches nothing
    }
  };
  async function answerUnmatched(req: Request, res: Response) {
    const requestId = requestIdOf(header(req, 'x-request-id'));
    const matches = known.filter((c) => matchesPath(c, req.path));
    const err = matches.length
      ? new DomainError('method_not_allowed', `Method ${req.method} is not allowed here`, {
          details: { allowed: matches.map((m) => m.proc.meta.http.method) },
        })
      : new DomainError('not_found', 'No such endpoint');
    const headers: Record<string, string> = matches.length ? { Allow: matches.map((m) => m.proc.meta.http.method).join(', ') } : {};
    req.resume();
    await recordAudit(services, auditRow({
      requestId, surface: 'rest', method: req.method, routePattern: matches[0]?.proc.meta.http.path ?? '(unmatched)',
      statusCode: err.status, units: 0, errorCode: err.code,
    }, undefined));
    sendError(res, err, requestId, headers);
  }
  return dispatch;
}

/** 400 `validation_error` for query parameters the operation does not take, in the shape of zod's own issue. */
function unknownQueryParameters(keys: string[]): DomainError {
  const message = `Unrecognized query parameter${keys.length > 1 ? 's' : ''}: ${keys.map((k) => JSON.stringify(k)).join(', ')}`;
  return new DomainError('validation_error', 'Invalid input', {
    details: { issues: [{ path: '', code: 'unrecognized_keys', message, keys }] },
  });
}

function streamFile(res: Response, f: NonNullable<RequestContext['out']['download']>, headers: Record<string, string>) {
  res.writeHead(200, mergeHeaders(API_SECURITY_HEADERS, headers, {
    'Content-Type': f.contentType,
    'Content-Length': String(f.size),
    'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(f.filename)}`,
    ETag: `"${f.sha256}"`,
    'Cache-Control': 'private, no-store',
  }));
  const stream = fs.createReadStream(f.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
