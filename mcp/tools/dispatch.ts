import { toWebRequest } from '@modelcontextprotocol/node';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpRequestContext,
  type Server,
} from '@modelcontextprotocol/server';
import type { ServerResponse } from 'node:http';
import { originFormOf } from '../../src/http/plainUrl.js';
import type { RateLimiter } from '../../src/auth/rateLimit.js';
import type { Services } from '../../src/domain/services.js';
import {
  CONTENT_LENGTH_HEADER,
  CONTENT_TYPE_HEADER,
  REQUEST_ID_HEADER,
  WWW_AUTHENTICATE,
} from '../../src/http/headers.js';
import { outcomeHeaders } from '../../src/http/outcomeHeaders.js';
import type { ResponseState } from '../../src/procedures/context.js';
import { writeHeadAtOnce } from '../../src/http/apiHeaders.js';
import { auditEndpointRejection } from '../transport/auditRejection.js';
import type { Message } from '../transport/body.js';
import { checkToolScopes } from './checkToolScopes.js';
import { needsConfirmation } from './confirm.js';
import { connectionRights } from '../server/connectionRights.js';
import { createMcpServer, type McpServerOptions } from '../server/createMcpServer.js';
import type { Entry } from '../transport/door.js';
import { sendEnvelope, sendJsonRpcError } from '../transport/httpReplies.js';
import { invokeTool, type ToolCallOptions } from './invokeTool.js';
import { LISTEN_METHOD, type ListenHub } from '../subscriptions/listen.js';
import { hasStandardHeaders, MODERN_REVISION, toolCallAnswerJson } from './plainToolCall.js';
import { declaresTasks, TASK_TOOL } from '../tasks/tasks.js';
import type { ToolCatalog } from './toolCatalog.js';

export interface DispatchOptions {
  services: Services;
  rateLimiter: RateLimiter;
  catalog: ToolCatalog;
  listen: ListenHub;
}

export type Dispatch = (res: ServerResponse, entry: Entry, message: Message) => Promise<void>;

/**
 * Where a checked message goes: a plain tools/call straight to its procedure (plainToolCall.ts), a 2026-07-28
 * request to the SDK's own entry, any 2025 one to a stateless server and transport of its own. Every leg
 * checks the scopes of the tools called first, and runs them through the procedure pipeline.
 */
export function createDispatch(options: DispatchOptions): Dispatch {
  const { services } = options;
  const state: DispatchState = {
    ...options,
    // The SDK's dual-revision entry, given only what classifies as 2026-07-28 (2025 requests take the legacy leg).
    // Its factory builds the request's server from the context passed in the pass-through `authInfo`.
    modernHandler: createMcpHandler(
      (ctx: McpRequestContext) => createMcpServer({ ...contextOf(ctx.authInfo), subscriptions: true }),
      {
        legacy: 'reject',
        // its refusals are answered and audited by the router; only a failure is worth a log line
        onerror: (err) => services.log.debug({ err }, 'mcp request refused'),
      },
    ),
  };
  return (res, entry, message) => dispatch(state, res, entry, message);
}

/** What every message's dispatch reads: the options, and the SDK entry built once. */
interface DispatchState extends DispatchOptions {
  readonly modernHandler: ReturnType<typeof createMcpHandler>;
}

async function dispatch(state: DispatchState, res: ServerResponse, entry: Entry, message: Message): Promise<void> {
  const { services, rateLimiter, catalog, listen } = state;
  const { body, mcpHeaders, plain, route, calls } = message;
  const { requestId, credentials, actor, clientIp, selection, headers } = entry;
  const call: ToolCallOptions = {
    services,
    rateLimiter,
    credentials,
    actor,
    clientIp,
    requestId: calls.length === 1 ? requestId : undefined,
  };
  // what this connection may call: the door's selection of the catalog; the rest of its rights (connectionRights.ts)
  // only for the legs that admit requests by them
  const tools = entry.tools;
  const rights = () => connectionRights({ services, catalog, selection, actor, requestId: call.requestId });
  // a 2026 request without the headers the SDK requires is refused by it below, before any tool runs
  const scopes =
    route?.kind === 'modern' && !hasStandardHeaders(mcpHeaders, route.message)
      ? null
      : checkToolScopes(calls, actor, tools, call);
  const checked = scopes === null ? null : await scopes;
  if (checked) {
    const { error, headers, requestId: callRequestId } = checked.refusal;
    return sendEnvelope(res, error, callRequestId, headers);
  }

  if (
    route?.kind === 'modern' &&
    route.messageKind === 'request' &&
    route.message.method === LISTEN_METHOD &&
    mcpHeaders.protocolVersionHeader === MODERN_REVISION &&
    hasStandardHeaders(mcpHeaders, route.message)
  )
    return listen.serve(res, entry, route.message, rights());

  headers[REQUEST_ID_HEADER] = requestId;
  const onToolOutcome = (out: ResponseState) => {
    // one tool call per POST: its rate-limit and unit headers, as REST sends them (JSON responses only)
    if (calls.length !== 1 || res.headersSent) return;
    const rendered = outcomeHeaders(out, services.config.baseUrl, 'mcp');
    for (const k in rendered) if (k !== WWW_AUTHENTICATE) headers[k] = rendered[k];
  };
  // a tool outside the selection goes to the server, which refuses it
  const tool = plain && tools.get(plain.name);
  // the server answers a destructive call the human confirms first (confirm.ts: input_required), and a run
  // started by a client of the tasks extension (tasks.ts: a task)
  const serverOnly =
    plain?.revision === MODERN_REVISION &&
    tool &&
    (needsConfirmation(tool.proc, actor, plainCapabilities(body)) ||
      (plain.name === TASK_TOOL && declaresTasks(plainCapabilities(body))));
  if (plain && tool && !serverOnly) {
    // answered as the SDK's server answers it (test/mcp/fastToolCall.test.ts compares the two), without building
    // one. As on REST, a call runs to its end when its client goes (no procedure reads a signal); nothing is written.
    const outcome = await invokeTool(tool.proc, plain.arguments, call);
    if (res.destroyed) return;
    onToolOutcome(outcome.out);
    try {
      return writeJsonAnswer(res, toolCallAnswerJson(plain.id, outcome, plain.revision));
    } catch (err) {
      return failedExchange(services, res, err, requestId);
    }
  }
  return exchange(state, res, message, requestId, { catalog, actor, call, onToolOutcome, rights: rights() });
}

/**
 * Every other message, through the SDK: the 2026-07-28 entry, or a 2025 server and transport of the request's own.
 * Both legs answer with a web Response, so that a refusal of the SDK is audited before the client reads it.
 */
async function exchange(
  { services, modernHandler }: DispatchState,
  res: ServerResponse,
  { body, sse, plain, route }: Message,
  requestId: string,
  context: McpServerOptions,
): Promise<void> {
  const { actor } = context;
  const aborted = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  let response: globalThis.Response;
  try {
    // (the SDK rebuilds the URL from Host and the target, so an absolute-form target is given as its origin form)
    const req = res.req;
    const target = req.url!.startsWith('/')
      ? req
      : (Object.create(req, { url: { value: originFormOf(req.url!) } }) as typeof req);
    const request = await toWebRequest(target, body, { signal: aborted.signal });
    if (plain ? plain.revision !== 'legacy' : route?.kind === 'modern') {
      // the SDK checks the envelope, headers and capabilities, and answers `server/discover`, `resultType` and
      // cache fields; our per-request context travels in the pass-through `authInfo`
      const authInfo: AuthInfo = {
        token: '',
        clientId: actor.clientId ?? '',
        scopes: [...actor.scopes],
        extra: { [CONTEXT]: context },
      };
      response = await modernHandler.fetch(request, { authInfo, parsedBody: body });
    } else {
      response = await legacyExchange(services, createMcpServer(context), request, body, sse, aborted.signal);
    }
  } catch (err) {
    return failedExchange(services, res, err, requestId);
  }
  if (response.status >= 400) {
    // refused by the SDK (Accept, protocol version, method, headers, envelope …)
    await auditEndpointRejection(services, {
      requestId,
      method: 'POST',
      statusCode: response.status,
      errorCode: transportErrorCode(response.status),
      actor,
    });
  }
  await writeResponse(services, res, response, aborted.signal);
}

/**
 * One 2025 exchange: the request's server connected to the SDK's stateless transport, JSON unless streaming.
 * A JSON answer leaves nothing running; an SSE stream, or a client gone first (`signal`), closes both, which
 * aborts the tool calls still in flight.
 */
async function legacyExchange(
  services: Services,
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
async function writeResponse(
  services: Services,
  res: ServerResponse,
  response: globalThis.Response,
  signal: AbortSignal,
): Promise<void> {
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
function failedExchange(services: Services, res: ServerResponse, err: unknown, requestId: string): void {
  services.log.error({ err, requestId }, 'mcp request failed');
  if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
}

/** A JSON-RPC answer as the body of a 200 (nothing when nobody is left to read it). */
function writeJsonAnswer(res: ServerResponse, body: string): void {
  if (res.destroyed) return;
  writeHeadAtOnce(res, 200, {
    [CONTENT_TYPE_HEADER]: 'application/json',
    [CONTENT_LENGTH_HEADER]: Buffer.byteLength(body),
  }).end(body);
}

/** The `authInfo.extra` key of the per-request context, for the SDK entry's server factory. */
const CONTEXT = 'svc.context';

function contextOf(authInfo: AuthInfo | undefined): McpServerOptions {
  const context = authInfo?.extra?.[CONTEXT] as McpServerOptions | undefined;
  // (cannot be: only dispatch calls the entry, and always with a context)
  if (!context) throw new Error('an MCP server was asked for without the request context');
  return context;
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
