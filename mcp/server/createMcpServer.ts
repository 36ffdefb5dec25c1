import {
  CLIENT_CAPABILITIES_META_KEY,
  Server,
  type CacheHint,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { AuthenticatedActor } from '../../src/domain/actor.js';
import type { ResponseState } from '../../src/procedures/context.js';
import { serverCapabilities } from './capabilities.js';
import { complete } from '../resources/completions.js';
import { clientCapabilitiesOf, serveMethods, type ConnectionRights } from './connectionRights.js';
import { confirm, confirmCodec, needsConfirmation } from '../tools/confirm.js';
import {
  cancelTask,
  declaresTasks,
  getTask,
  TASK_TOOL,
  TaskParams,
  taskIdOf,
  taskOf,
  updateTask,
} from '../tasks/tasks.js';
import { appsToolList, isViewUri, listsViews } from '../apps/catalog.js';
import { readView, viewResources } from '../apps/resources.js';
import { invokeTool, type ToolCallOptions } from '../tools/invokeTool.js';
import { listResources, readResource, resourceTemplates } from '../resources/resources.js';
import { toolsFor, type ToolCatalog } from '../tools/toolCatalog.js';
import { toCheckedToolResult } from '../tools/toolResult.js';

/** Name and version the server reports in `initialize`, `server/discover` and each 2026-07-28 result's `_meta`. */
export const SERVER_INFO = { name: 'svc', title: 'svc collaboration service', version: '0.1.0' };

export const INSTRUCTIONS =
  'Tools for a team collaboration service: rooms, messages, tasks, meeting records with approvals, files and events. ' +
  'List tools take `limit` (1-200) and an opaque `cursor` (pass `nextCursor` unchanged). Write tools accept an ' +
  'optional `idempotencyKey`; reuse it when retrying so an action happens once. Errors come back with isError and ' +
  '{"error":{"code","message","requestId","details"}}. Resources: svc://rooms/{roomId}, its recent messages, records and files ' +
  '(resources/templates/list); search finds messages and tasks.';

/**
 * Cache hints of the 2026-07-28 revision's cacheable results (the SDK writes them as `ttlMs`/`cacheScope`;
 * 2025 answers never carry them). What a credential sees is `private`: the tool list is filtered by its
 * scopes, resources are the caller's rooms. The templates and the discovery answer are the same for every
 * caller. Rooms and their content change at any time, so they are not to be reused.
 */
export const CACHE_HINTS: Record<
  'tools/list' | 'resources/list' | 'resources/templates/list' | 'resources/read' | 'server/discover',
  CacheHint
> = {
  'tools/list': { ttlMs: 300_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
};

export interface McpServerOptions {
  catalog: ToolCatalog;
  /** The credential's actor, authenticated at the HTTP level; `tools/list` shows what its scopes allow. */
  actor: AuthenticatedActor;
  call: Omit<ToolCallOptions, 'signal'>;
  /** Told the response state of each tool call (its rate-limit and unit headers). */
  onToolOutcome?: (out: ResponseState) => void;
  /** What the connection may call (connectionRights.ts): its selected tools, task methods, resources. */
  rights: ConnectionRights;
  /** A 2026-07-28 server: it declares resource subscriptions, which `subscriptions/listen` serves (listen.ts). */
  subscriptions?: boolean;
}

/** One validator for every per-request server: building an Ajv instance per POST costs a tenth of MCP CPU. */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * One MCP server for one HTTP request, whichever revision it speaks (stateless Streamable HTTP: a 2025
 * request with the `initialize` handshake, or a 2026-07-28 request with its `_meta` envelope). The low-level
 * `Server` is used so the tool list and schemas come from the procedure catalog as they are, filtered per
 * credential, and every `tools/call` goes through the procedure pipeline (`invokeTool`).
 */
export function createMcpServer({
  catalog,
  actor,
  call,
  onToolOutcome,
  rights,
  subscriptions,
}: McpServerOptions): Server {
  // the confirmation states' codec (confirm.ts), made when a request carries or needs one
  let codec: ReturnType<typeof confirmCodec> | undefined;
  const codecOf = () => (codec ??= confirmCodec(call.services.secret, actor));
  const server = new Server(SERVER_INFO, {
    capabilities: serverCapabilities(!!subscriptions), // capabilities.ts
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: sharedValidator,
    cacheHints: CACHE_HINTS,
    // a requestState that fails its MAC, expiry or credential binding is refused by the SDK (-32602) before any handler
    requestState: { verify: (state, ctx) => codecOf().verify(state, ctx) },
  });

  // every handler is admitted by the connection's rights first (connectionRights.ts): the selected tools for
  // tools/list and tools/call, a task method as the tool it stands for; resources read through the whole catalog
  const serve = serveMethods(server, rights);
  const tools = rights.tools;
  // sorted by name: a 2026-07-28 client may cache the list, and the same credential gets the same text
  serve('tools/list', async (_request, ctx) => {
    const list = toolsFor(tools, actor.scopes, actor.agentRunId).sort(byName);
    // MCP Apps (mcp/apps/): each view's link on its tool, and the app-only tools, for a client of the extension
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    return { tools: appsToolList(list, envelope, CLIENT_CAPABILITIES_META_KEY) };
  });

  serve('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const entry = tools.get(request.params.name)!; // admitted: in the selection
    const clientCapabilities = clientCapabilitiesOf(ctx);
    if (needsConfirmation(entry.proc, actor, clientCapabilities)) {
      // a destructive tool: the human confirms it first (confirm.ts); only an accepted retry runs it
      const asked = await confirm(entry.proc, request.params.arguments ?? {}, ctx, {
        services: call.services,
        actor,
        codec: codecOf(),
      });
      if (asked.kind === 'answer') return asked.result;
    }
    const outcome = await invokeTool(entry.proc, request.params.arguments ?? {}, {
      ...call,
      signal: ctx.mcpReq.signal,
    });
    onToolOutcome?.(outcome.out);
    const progressToken = request.params._meta?.progressToken;
    if (progressToken !== undefined) {
      // the client asked for progress (and so gets an SSE stream): report completion before the result
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 1 } });
    }
    if (outcome.ok && entry.proc.meta.tool.name === TASK_TOOL && declaresTasks(clientCapabilities)) {
      // the run goes on after this answer: a client of the tasks extension gets its handle (tasks.ts)
      const run = outcome.data as Parameters<typeof taskOf>[1];
      const { result: _none, ...task } = taskOf(taskIdOf(call.services.secret, actor, run.roomId, run.id), run);
      return { ...task, resultType: 'task' } as unknown as CallToolResult;
    }
    return toCheckedToolResult(outcome);
  });

  // the tasks extension (tasks.ts): a run started as a task, read and cancelled by the credential that started it,
  // through the selected tools (admitted as the tool each stands for)
  serve('tasks/get', { params: TaskParams }, async (params, ctx) =>
    getTask(params.taskId, tools, { ...call, signal: ctx.mcpReq.signal }, (o) => onToolOutcome?.(o.out)),
  );
  serve('tasks/cancel', { params: TaskParams }, async (params, ctx) =>
    cancelTask(params.taskId, tools, { ...call, signal: ctx.mcpReq.signal }, (o) => onToolOutcome?.(o.out)),
  );
  serve('tasks/update', { params: TaskParams }, async (params) => updateTask(params.taskId, call));

  // Resources: read through the same procedures and pipeline as the tools (resources.ts)
  serve('resources/templates/list', async () => ({ resourceTemplates: resourceTemplates() }));
  serve('resources/list', async (request, ctx) => {
    const page = await listResources(catalog, { ...call, signal: ctx.mcpReq.signal }, request.params?.cursor);
    // MCP Apps: the views, on the first page, for a 2026-07-28 client that declared the extension
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const views = !request.params?.cursor && listsViews(envelope, CLIENT_CAPABILITIES_META_KEY);
    return views ? { ...page, resources: [...viewResources(), ...page.resources] } : page;
  });
  serve('resources/read', async (request, ctx) =>
    isViewUri(request.params.uri) // MCP Apps: a view's document
      ? readView(request.params.uri)
      : readResource(request.params.uri, catalog, { ...call, signal: ctx.mcpReq.signal }, (o) =>
          onToolOutcome?.(o.out),
        ),
  );
  // completion/complete: the resource templates' ids, within the caller's rights (completions.ts)
  serve('completion/complete', async (request) => complete(request.params, call, onToolOutcome));
  return server;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
