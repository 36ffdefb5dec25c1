import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema, CreateTaskResultSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema,
  McpError, ReadResourceRequestSchema, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthenticatedActor } from '../src/domain/actor.js';
import type { ResponseState } from '../src/procedures/context.js';
import { newId } from '../src/domain/ids.js';
import { auditRejection } from './auditRejection.js';
import { invokeTool, type ToolCallOptions } from './invokeTool.js';
import { listResources, readResource, resourceTemplates } from './resources.js';
import { RPC_INVALID_PARAMS, RpcError } from './rpcError.js';
import { toolsFor, type ToolCatalog } from './toolCatalog.js';
import { toCheckedToolResult, toToolResult } from './toolResult.js';
import { selectTools, unknownToolMessage, type ToolSelection } from './toolsets.js';
import { protocolSetRequestHandler } from '../src/fastpaths/protocolSetRequestHandler.js';

/** Name and version the server reports in `initialize`. */
export const SERVER_INFO = { name: 'svc', title: 'svc collaboration service', version: '0.1.0' };

const INSTRUCTIONS =
  'Tools for a team collaboration service: rooms, messages, tasks, meeting records with approvals, files and events. ' +
  'List tools take `limit` (1-200) and an opaque `cursor` (pass `nextCursor` unchanged). Write tools accept an ' +
  'optional `idempotencyKey`; reuse it when retrying so an action happens once. Errors come back with isError and ' +
  '{"error":{"code","message","requestId","details"}}. Resources: svc://rooms/{roomId}, its recent messages, records and files ' +
  '(resources/templates/list); search finds messages and tasks.';

export interface McpServerOptions {
  catalog: ToolCatalog;
  /** The credential's actor, authenticated at the HTTP level; `tools/list` shows what its scopes allow. */
  actor: AuthenticatedActor;
  call: Omit<ToolCallOptions, 'signal'>;
  /** Told the response state of each tool call (its rate-limit and unit headers). */
  onToolOutcome?: (out: ResponseState) => void;
  /** The connection's toolsets and read-only mode (mcp/toolsets.ts): the tools it lists and may call. */
  selection?: ToolSelection;
}

/** One validator for every per-request server: building an Ajv instance per POST was ~10% of MCP CPU (bench/README.md). */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * One MCP server for one HTTP request (stateless Streamable HTTP). The low-level `Server` is used so the
 * tool list and schemas come from the procedure catalog as they are, filtered per credential, and every
 * `tools/call` goes through the procedure pipeline (`invokeTool`).
 */
export function createMcpServer({ catalog, actor, call, onToolOutcome, selection }: McpServerOptions): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: sharedValidator,
  });

  // toolsets (mcp/toolsets.ts): tools/list and tools/call see the selected tools only; resources read through the whole catalog
  const tools = selectTools(catalog, selection);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolsFor(tools, actor.scopes, actor.agentRunId) }));

  protocolSetRequestHandler.call(server, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const entry = tools.get(request.params.name); // toolsets
    if (!entry) {
      await auditRejection(call.services, {
        requestId: call.requestId ?? newId('req'), method: 'TOOL', routePattern: '(unknown tool)', statusCode: 404, errorCode: 'not_found', actor,
      });
      throw new RpcError(RPC_INVALID_PARAMS, unknownToolMessage(request.params.name, catalog, selection)); // toolsets
    }
    const outcome = await invokeTool(entry.proc, request.params.arguments ?? {}, { ...call, signal: extra.signal });
    onToolOutcome?.(outcome.out);
    const progressToken = request.params._meta?.progressToken;
    if (progressToken !== undefined) {
      // the client asked for progress (and so gets an SSE stream): report completion before the result
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 1 } });
    }
    if (request.params.task) {
      // as the SDK's override: a task-augmented call must answer with a task, which no tool here creates
      const task = CreateTaskResultSchema.safeParse(toToolResult(outcome));
      if (!task.success) throw new McpError(ErrorCode.InvalidParams, `Invalid task creation result: ${task.error.message}`);
      return task.data as unknown as CallToolResult;
    }
    return toCheckedToolResult(outcome);
  });

  // Resources: read through the same procedures and pipeline as the tools (resources.ts)
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: resourceTemplates() }));
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) =>
    listResources(catalog, { ...call, signal: extra.signal }, request.params?.cursor));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) =>
    readResource(request.params.uri, catalog, { ...call, signal: extra.signal }, (o) => onToolOutcome?.(o.out)));
  return server;
}
