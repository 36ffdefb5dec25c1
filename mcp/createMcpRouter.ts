import { toWebRequest } from '@modelcontextprotocol/node';
import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpRequestContext,
  type Server,
} from '@modelcontextprotocol/server';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RateLimiter } from '../src/auth/rateLimit.js';
import type { Credentials } from '../src/auth/credentials.js';
import type { Actor } from '../src/domain/actor.js';
import { DomainError } from '../src/domain/errors.js';
import type { Services } from '../src/domain/services.js';
import type { ResponseState } from '../src/procedures/context.js';
import { API_SECURITY_HEADERS, headersAtWriteHead } from '../src/http/apiHeaders.js';
import { EXPOSED_API_HEADERS, outcomeHeaders } from '../src/http/headers.js';
import { requestIdOf } from '../src/http/requestId.js';
import { MCP_SCOPE, SURFACES, surfacePattern } from '../src/http/surfaces.js';
import { setOperation } from '../src/observability/observeRequests.js';
import { hasStandardHeaders, MODERN_REVISION, plainToolCallOf, toolCallAnswerJson } from './plainToolCall.js';
import { needsConfirmation } from './confirm.js';
import { declaresTasks, TASK_TOOL } from './tasks.js';
import { auditRejection } from './auditRejection.js';
import { authenticateMcp } from './authenticateMcp.js';
import { checkToolScopes, toolCallsOf } from './checkToolScopes.js';
import { createMcpServer, type McpServerOptions } from './createMcpServer.js';
import {
  echoableId,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_PARSE_ERROR,
  JSONRPC_SERVER_ERROR,
  sendEnvelope,
  sendJsonRpcError,
} from './httpReplies.js';
import { invokeTool, type ToolCallOptions } from './invokeTool.js';
import { createOriginPolicy } from './originPolicy.js';
import { ClientGoneError, endForGoneClient } from '../src/readLimited.js';
import { readMcpBody } from './readMcpBody.js';
import { RPC_INVALID_PARAMS } from './rpcError.js';
import { buildToolCatalog } from './toolCatalog.js';
import { toCheckedToolResult } from './toolResult.js';
import { parseToolSelection, selectTools } from './toolsets.js';

export interface McpRouterOptions {
  services: Services;
  rateLimiter: RateLimiter;
}

/** Headers a browser-based MCP client sends and must be able to read (MCP transport, authorization). */
const CORS_OPTIONS: cors.CorsOptions = {
  origin: true, // the Origin was validated just before; reflect it
  methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: [
    'Authorization',
    'Content-Type',
    'Accept',
    'Mcp-Protocol-Version',
    'Mcp-Method',
    'Mcp-Name',
    'Mcp-Session-Id',
    'Last-Event-ID',
    'X-Api-Key',
    'X-Request-Id',
    'X-MCP-Toolsets',
    'X-MCP-Readonly',
  ],
  exposedHeaders: ['WWW-Authenticate', 'Mcp-Session-Id', 'Mcp-Protocol-Version', ...EXPOSED_API_HEADERS],
  maxAge: 600,
};

const header = (req: Request, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** The endpoint, and everything below it (matched as an Express mount path would be: any case, optional trailing slash). */
const MCP_ENDPOINT = new RegExp(`${surfacePattern('mcp')}\\/?$`, 'i');
const UNDER_MCP = new RegExp(`${surfacePattern('mcp')}(?:\\/|$)`, 'i');

const wantsProgress = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some(
    (m) => (m as { params?: { _meta?: { progressToken?: unknown } } })?.params?._meta?.progressToken !== undefined,
  );

/**
 * The MCP surface at /mcp (`app.use(createMcpRouter(…))`; it answers every path under /mcp and passes the others
 * on): the Streamable HTTP transport
 * of the MCP SDK, stateless (a fresh server and transport per POST where one is needed, no `Mcp-Session-Id`: nothing is
 * server-initiated, and every request carries its own credential, so a session would only add state to
 * share between processes). Every procedure is a tool (see toolCatalog.ts); every tool call runs the
 * procedure pipeline. Refusals before the pipeline (Origin, credential, method, body) are audited here.
 */
export function createMcpRouter({ services, rateLimiter }: McpRouterOptions): RequestHandler {
  const catalog = buildToolCatalog();
  // the 401 challenge's scope: `mcp:tools` and every scope a tool needs (issue 19 item 3)
  const challengeScope = [
    ...new Set([MCP_SCOPE, ...[...catalog.values()].flatMap((e) => (e.proc.meta.scope ? [e.proc.meta.scope] : []))]),
  ].join(' ');
  const originAllowed = createOriginPolicy(services.config);
  const bodyLimit = Math.ceil((services.config.maxUploadBytes * 4) / 3) + 1024 * 1024; // upload_file carries base64

  const refuse = async (
    req: Request,
    res: Response,
    o: { requestId: string; error: DomainError; headers?: Record<string, string>; actor?: Actor },
  ) => {
    if (o.error.status >= 500)
      services.log.error({ err: o.error.cause ?? o.error, requestId: o.requestId }, 'mcp request failed');
    await auditRejection(services, {
      requestId: o.requestId,
      method: req.method,
      routePattern: SURFACES.mcp.path,
      statusCode: o.error.status,
      errorCode: o.error.code,
      actor: o.actor,
    });
    sendEnvelope(res, o.error, o.requestId, o.headers);
  };

  // CORS headers are for browsers, which always send Origin on these requests; other clients ignore them
  const corsHeaders = cors(CORS_OPTIONS);

  // The SDK's dual-revision entry, serving only what classifies as 2026-07-28 here (2025 requests are routed
  // to the legacy leg below before it). Its factory builds the request's server from the context the router
  // put in the pass-through `authInfo` (the entry never reads a credential itself).
  const modernHandler = createMcpHandler((ctx: McpRequestContext) => createMcpServer(contextOf(ctx.authInfo)), {
    legacy: 'reject',
    // its refusals are answered and audited by the router; only a failure is worth a log line
    onerror: (err) => services.log.debug({ err }, 'mcp request refused'),
  });

  // One middleware function, not an Express Router with a layer per step: a tool call pays for each.
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    if (!UNDER_MCP.test(path)) return next();
    // Every answer of /mcp carries the API security headers; they, the request id and the tool call's
    // rate-limit and unit headers go into the one writeHead of the answer (the SDK's transport writes it).
    const headers = headersAtWriteHead(res, { ...API_SECURITY_HEADERS, Vary: 'Origin' });
    // MCP transport spec: validate Origin on every request, preflights included, against DNS rebinding.
    const origin = header(req, 'origin');
    if (!originAllowed(origin)) {
      req.resume();
      refuse(req, res, {
        requestId: requestIdOf(header(req, 'x-request-id')),
        error: new DomainError('forbidden', 'Origin not allowed', { details: { origin } }),
      }).catch(next);
      return;
    }
    // (a path below /mcp: nothing is served there)
    const serve = (): void => {
      (MCP_ENDPOINT.test(path) ? answer(req, res, headers) : answerUnmatched(req, res)).catch(next);
    };
    if (origin === undefined) return serve();
    corsHeaders(req, res, (err?: unknown) => (err ? next(err) : serve()));
  };

  /** The endpoint; `headers` go into the answer's writeHead (see above). */
  async function answer(req: Request, res: Response, headers: Record<string, string>) {
    setOperation(res, ENDPOINT_OPERATIONS[req.method] ?? 'unmatched');
    const requestId = requestIdOf(header(req, 'x-request-id'));
    const credentials: Credentials = { authorization: header(req, 'authorization'), apiKey: header(req, 'x-api-key') };
    const clientIp = req.ip ?? 'unknown';
    const door = await authenticateMcp({ services, rateLimiter, credentials, clientIp, challengeScope });
    if ('error' in door) {
      req.resume();
      return refuse(req, res, { requestId, ...door });
    }
    const { actor } = door;
    if (req.method !== 'POST') {
      // stateless: no standalone SSE stream (GET) and no session to end (DELETE), as the SDK's stateless examples.
      // Clients probe GET after every initialize (the transport spec lets the server answer 405): that probe is
      // protocol negotiation, not a refusal, and is not audited; any other method is.
      req.resume();
      if (req.method !== 'GET') {
        await auditRejection(services, {
          requestId,
          method: req.method,
          routePattern: SURFACES.mcp.path,
          statusCode: 405,
          errorCode: 'method_not_allowed',
          actor,
        });
      }
      return sendJsonRpcError(res, 405, JSONRPC_SERVER_ERROR, 'Method not allowed.', {
        Allow: 'POST',
        'X-Request-Id': requestId,
      });
    }

    // toolsets (mcp/toolsets.ts): the connection's selection of tools, from X-MCP-Toolsets / X-MCP-Readonly or ?toolsets= / ?readonly=
    const selection = parseToolSelection(req.headers, req.query as Record<string, unknown>);
    if ('error' in selection) {
      req.resume();
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: 400,
        errorCode: 'validation_error',
        actor,
      });
      return sendJsonRpcError(res, 400, RPC_INVALID_PARAMS, selection.error, { 'X-Request-Id': requestId });
    }
    const tools = selectTools(catalog, selection);

    let read: Awaited<ReturnType<typeof readMcpBody>>;
    try {
      read = await readMcpBody(req, bodyLimit);
    } catch (err) {
      if (err instanceof ClientGoneError) return endForGoneClient(res);
      throw err;
    }
    if ('error' in read) {
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: read.status,
        errorCode: read.code,
        actor,
      });
      return sendJsonRpcError(
        res,
        read.status,
        read.status === 400 ? JSONRPC_PARSE_ERROR : JSONRPC_SERVER_ERROR,
        read.error,
        {
          ...read.headers,
          'X-Request-Id': requestId,
        },
      );
    }

    if (read.body === null) {
      // not application/json (readMcpBody leaves it unparsed): refused as the SDK's transports refuse it
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: 415,
        errorCode: 'unsupported_media_type',
        actor,
      });
      return sendJsonRpcError(
        res,
        415,
        JSONRPC_SERVER_ERROR,
        'Unsupported Media Type: Content-Type must be application/json',
        { 'X-Request-Id': requestId },
      );
    }

    const mcpHeaders = {
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      mcpNameHeader: header(req, 'mcp-name'),
    };
    // JSON unless the client asked for progress notifications, which need the SSE stream
    const sse = wantsProgress(read.body);
    // the most common POST, a plain tools/call on either revision, is known by its headers and shape (plainToolCall.ts)
    const plain = sse ? null : plainToolCallOf(mcpHeaders, header(req, 'accept'), read.body);
    // Any other: which revision it speaks, decided by the SDK's own classifier (the one createMcpHandler runs): a
    // 2025 request (no `_meta` envelope: the `initialize` handshake and what follows it), a 2026-07-28 request,
    // or a refusal (headers that contradict the body, a malformed envelope, a batch holding a 2026 request …).
    // Nothing runs before it: a refused request is answered and audited here, its tool never looked at.
    const route = plain ? null : classifyInboundRequest({ httpMethod: 'POST', ...mcpHeaders, body: read.body });
    if (route?.kind === 'reject') {
      setOperation(res, 'invalid');
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: route.httpStatus,
        errorCode: ladderErrorCode(route.code),
        actor,
      });
      return sendJsonRpcError(
        res,
        route.httpStatus,
        route.code,
        route.message,
        { 'X-Request-Id': requestId },
        { data: route.data, id: echoableId(read.body) },
      );
    }

    if (Array.isArray(read.body) && BATCHLESS_REVISIONS.has(mcpHeaders.protocolVersionHeader ?? '')) {
      // JSON-RPC batches left MCP with 2025-06-18; only a 2025-03-26 client may send one
      setOperation(res, 'batch');
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: 400,
        errorCode: 'validation_error',
        actor,
      });
      const message = `Invalid Request: protocol revision ${mcpHeaders.protocolVersionHeader} does not allow JSON-RPC batches`;
      return sendJsonRpcError(res, 400, JSONRPC_INVALID_REQUEST, message, { 'X-Request-Id': requestId });
    }

    const calls = toolCallsOf(read.body);
    setOperation(res, operationOf(read.body, calls, tools)); // toolsets
    const call: ToolCallOptions = {
      services,
      rateLimiter,
      credentials,
      actor,
      clientIp,
      requestId: calls.length === 1 ? requestId : undefined,
    };
    // a 2026 request without the headers the SDK requires is refused by it below, before any tool runs
    const checked =
      route?.kind === 'modern' && !hasStandardHeaders(mcpHeaders, route.message)
        ? null
        : await checkToolScopes(read.body, actor, tools, call); // toolsets
    if (checked) {
      const { error, headers, requestId: callRequestId } = checked.refusal;
      return sendEnvelope(res, error, callRequestId, headers);
    }

    headers['X-Request-Id'] = requestId;
    const onToolOutcome = (out: ResponseState) => {
      // one tool call per POST: its rate-limit and unit headers, as REST sends them (JSON responses only)
      if (calls.length !== 1 || res.headersSent) return;
      const rendered = outcomeHeaders(out, services.config.baseUrl, 'mcp');
      for (const k in rendered) if (k !== 'WWW-Authenticate') headers[k] = rendered[k];
    };
    const tool = plain && tools.get(plain.name); // toolsets: a tool outside the selection goes to the server, which refuses it
    // a destructive call the human confirms first is the server's (confirm.ts): it answers input_required
    // so is a run started by a client of the tasks extension: it answers a task (tasks.ts)
    const serverOnly =
      plain?.revision === MODERN_REVISION &&
      tool &&
      (needsConfirmation(tool.proc, actor, plainCapabilities(read.body)) ||
        (plain.name === TASK_TOOL && declaresTasks(plainCapabilities(read.body))));
    if (plain && tool && !serverOnly) {
      // the most common POST, a plain tools/call of a known tool on either revision: answered as the SDK's
      // server answers it (test/mcp/fastToolCall.test.ts compares the two), without building one (plainToolCall.ts)
      const aborted = new AbortController();
      // the call's controller on the response and a listener of the module, not a closure here: a closure made
      // in this scope holds all of it (the body, the actor, the answer's headers), and the response kept that
      // alive until scavenges moved it to the old generation
      (res as CallResponse)[CALL_ABORT] = aborted;
      res.on('close', abortUnfinishedCall);
      const outcome = await invokeTool(tool.proc, plain.arguments, { ...call, signal: aborted.signal });
      if (aborted.signal.aborted) return;
      onToolOutcome(outcome.out);
      try {
        return writeJsonAnswer(res, toolCallAnswerJson(plain.id, toCheckedToolResult(outcome), plain.revision));
      } catch (err) {
        return failedExchange(res, err, requestId);
      }
    }
    const context: McpServerOptions = { catalog, actor, call, onToolOutcome, selection }; // toolsets
    // Both legs answer with a web Response, so that a refusal of the SDK is audited before the client reads it
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    let response: globalThis.Response;
    try {
      const request = await toWebRequest(req, read.body, { signal: aborted.signal });
      if (plain ? plain.revision !== 'legacy' : route?.kind === 'modern') {
        // 2026-07-28: the SDK's own entry (envelope, header and capability checks, `server/discover`, `resultType`,
        // cache fields), handed our per-request context through the pass-through `authInfo` it gives the factory
        const authInfo: AuthInfo = {
          token: '',
          clientId: actor.clientId ?? '',
          scopes: [...actor.scopes],
          extra: { [CONTEXT]: context },
        };
        response = await modernHandler.fetch(request, { authInfo, parsedBody: read.body });
      } else {
        // 2025-11-25 … 2025-03-26: stateless, a server and the SDK's transport per POST, JSON unless streaming
        response = await legacyExchange(createMcpServer(context), request, read.body, sse, aborted.signal);
      }
    } catch (err) {
      return failedExchange(res, err, requestId);
    }
    if (response.status >= 400) {
      // refused by the SDK (Accept, protocol version, method, headers, envelope …)
      await auditRejection(services, {
        requestId,
        method: 'POST',
        routePattern: SURFACES.mcp.path,
        statusCode: response.status,
        errorCode: transportErrorCode(response.status),
        actor,
      });
    }
    await writeResponse(res, response, aborted.signal);
  }

  /**
   * One 2025 exchange: the request's server connected to the SDK's stateless transport. A JSON answer leaves
   * nothing running; an SSE stream, or a client gone first (`signal`), closes both, which aborts the tool
   * calls still in flight.
   */
  async function legacyExchange(
    server: Server,
    request: globalThis.Request,
    body: unknown,
    sse: boolean,
    signal: AbortSignal,
  ): Promise<globalThis.Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !sse,
    });
    const close = () => {
      const closeFailed = (err: unknown) => services.log.warn({ err }, 'closing an mcp exchange failed');
      transport.close().catch(closeFailed);
      server.close().catch(closeFailed);
    };
    signal.addEventListener('abort', close, { once: true });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (!sse || !response.body) signal.removeEventListener('abort', close);
    return response;
  }

  /** Writes a web Response to the Node response, streaming an SSE body until it ends or the client goes. */
  async function writeResponse(res: Response, response: globalThis.Response, signal: AbortSignal): Promise<void> {
    if (res.destroyed) return;
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => (out[k] = v));
    res.writeHead(response.status, out);
    if (!response.body) return void res.end();
    const reader = response.body.getReader();
    const cancel = () => void reader.cancel().catch(() => undefined);
    signal.addEventListener('abort', cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) break;
        if (!res.write(value))
          await new Promise<void>((resolve) => {
            res.once('drain', resolve);
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
      }
    } catch (err) {
      services.log.warn({ err }, 'an mcp response stream failed');
    } finally {
      signal.removeEventListener('abort', cancel);
      res.end();
    }
  }

  /** An exchange that failed outside the MCP server's own handling: a JSON-RPC internal error, logged. */
  function failedExchange(res: Response, err: unknown, requestId: string): void {
    services.log.error({ err, requestId }, 'mcp request failed');
    if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
  }

  /** A JSON-RPC answer as the body of a 200 (nothing when nobody is left to read it). */
  function writeJsonAnswer(res: Response, body: string): void {
    if (res.destroyed) return;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  }

  async function answerUnmatched(req: Request, res: Response) {
    const requestId = requestIdOf(header(req, 'x-request-id'));
    req.resume();
    await auditRejection(services, {
      requestId,
      method: req.method,
      routePattern: '(unmatched)',
      statusCode: 404,
      errorCode: 'not_found',
    });
    sendJsonRpcError(res, 404, JSONRPC_SERVER_ERROR, 'Not found: the MCP endpoint is /mcp', {
      'X-Request-Id': requestId,
    });
  }
}

/** The 2025 revisions that removed JSON-RPC batching (2025-03-26 still has it; 2026-07-28 batches are the classifier's). */
const BATCHLESS_REVISIONS = new Set(['2025-06-18', '2025-11-25']);

/** The `authInfo.extra` key of the router's per-request context, for the SDK entry's server factory. */
const CONTEXT = 'svc.context';

function contextOf(authInfo: AuthInfo | undefined): McpServerOptions {
  const context = authInfo?.extra?.[CONTEXT] as McpServerOptions | undefined;
  // (cannot be: only the router calls the entry, and always with a context)
  if (!context) throw new Error('an MCP server was asked for without the request context');
  return context;
}

/** The audit row's error code for a JSON-RPC refusal of the SDK's classifier (MCP 2026-07-28 error codes). */
function ladderErrorCode(code: number): string {
  if (code === -32022) return 'unsupported_protocol_version';
  if (code === -32020) return 'header_mismatch';
  if (code === -32601) return 'not_found';
  return 'validation_error';
}

const CALL_ABORT = Symbol('svc.mcpCallAbort');
type CallResponse = Response & { [CALL_ABORT]?: AbortController };

/** A response closed before its answer was written in full: the client is gone, and its tool call is aborted. */
function abortUnfinishedCall(this: CallResponse): void {
  if (!this.writableFinished) this[CALL_ABORT]?.abort();
}

/** The endpoint's operation by HTTP method, until the body names a better one (operationOf). */
const ENDPOINT_OPERATIONS: Record<string, string> = {
  GET: 'GET /mcp',
  POST: 'POST /mcp',
  DELETE: 'DELETE /mcp',
  OPTIONS: 'OPTIONS /mcp',
};
/** JSON-RPC methods named as themselves in metrics and traces; any other is `other`. */
const RPC_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * What a POST to /mcp is, for metrics and traces (bounded, never an argument): the tool of a single
 * `tools/call` (`unknown_tool` for a name the catalog lacks), the JSON-RPC method, or `batch`.
 */
function operationOf(
  body: unknown,
  calls: ReturnType<typeof toolCallsOf>,
  catalog: ReturnType<typeof buildToolCatalog>,
): string {
  if (Array.isArray(body)) return 'batch';
  const name = calls[0]?.params.name;
  if (name !== undefined) return catalog.get(name)?.proc.meta.tool.name ?? 'unknown_tool';
  const method = (body as { method?: unknown } | null)?.method;
  return typeof method === 'string' && RPC_METHODS.has(method) ? method : 'other';
}

function transportErrorCode(status: number): string {
  const codes: Record<number, string> = {
    400: 'validation_error',
    404: 'not_found',
    406: 'not_acceptable',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
  };
  return codes[status] ?? 'internal_error';
}

/** The client capabilities a plain 2026 tools/call's envelope declares. */
const plainCapabilities = (body: unknown): unknown =>
  ((body as { params?: { _meta?: Record<string, unknown> } }).params?._meta ?? {})[CLIENT_CAPABILITIES_META_KEY];
