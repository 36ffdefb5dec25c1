import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { AuthenticatedActor } from '../../src/domain/actor.js';
import { newId } from '../../src/domain/ids.js';
import type { Services } from '../../src/domain/services.js';
import { auditRejection } from '../transport/auditRejection.js';
import { needsConfirmation } from '../tools/confirm.js';
import { RPC_INVALID_PARAMS, RpcError } from './rpcError.js';
import { declaresTasks, runOfTaskId, TASKS_EXTENSION } from '../tasks/tasks.js';
import type { CatalogEntry, ToolCatalog } from '../tools/toolCatalog.js';
import { selectTools, unknownToolMessage, type ToolSelection } from '../tools/toolsets.js';

/**
 * What deciding a request method needs:
 * - `tools`: the connection's tool list (its selection);
 * - `tool`: a call of the named tool, which must be in the selection (a destructive one is confirmed, confirm.ts);
 * - `task`: a task method, a call of `tool` in disguise: the client declares the tasks extension on the request,
 *   and the tool passes the same selection and confirmation rules as a `tools/call` of it would;
 * - `resource`: a read of the caller's resources, each through a read tool's procedure and its scope. A selection
 *   narrows the tools, not the resources, and every resource method only reads, so read-only mode holds.
 */
export type MethodRule =
  { kind: 'tools' } | { kind: 'tool' } | { kind: 'task'; tool: string; runs: boolean } | { kind: 'resource' };

/**
 * Every request method the MCP server of /mcp answers besides the SDK's own (`initialize`, `ping`,
 * `server/discover`), and its rule. A handler is registered through `serveMethods` only, which refuses a method
 * without a rule here: a new method cannot be served without saying what a connection needs to call it.
 */
export const METHOD_RULES = {
  'tools/list': { kind: 'tools' },
  'tools/call': { kind: 'tool' },
  'tasks/get': { kind: 'task', tool: 'get_agent_run', runs: true },
  'tasks/cancel': { kind: 'task', tool: 'cancel_agent_run', runs: true },
  // no task of svc ever waits for input: an update is answered without running anything
  'tasks/update': { kind: 'task', tool: 'get_agent_run', runs: false },
  'resources/templates/list': { kind: 'resource' },
  'resources/list': { kind: 'resource' },
  'resources/read': { kind: 'resource' },
  'completion/complete': { kind: 'resource' },
  'subscriptions/listen': { kind: 'resource' },
} as const satisfies Record<string, MethodRule>;

export type McpMethod = keyof typeof METHOD_RULES;

export interface ConnectionRightsOptions {
  services: Services;
  catalog: ToolCatalog;
  selection: ToolSelection;
  actor: AuthenticatedActor;
  /** The HTTP request's id, for the audit row of a refused call. */
  requestId?: string;
}

/** What one connection (one POST to /mcp) may call, decided in one place for every method. */
export interface ConnectionRights {
  /** The tools the connection lists and may call. */
  readonly tools: ToolCatalog;
  /**
   * Refuses a request the connection may not make (a JSON-RPC error, the unknown tool audited); returns when it
   * may go on. `params` are the request's params, `clientCapabilities` those its 2026-07-28 envelope declares.
   */
  admit(method: McpMethod, params: Record<string, unknown> | undefined, clientCapabilities: unknown): Promise<void>;
}

export function connectionRights({
  services,
  catalog,
  selection,
  actor,
  requestId,
}: ConnectionRightsOptions): ConnectionRights {
  const tools = selectTools(catalog, selection);

  const selected = async (name: string, shownAs: string): Promise<CatalogEntry> => {
    const entry = tools.get(name);
    if (entry) return entry;
    await auditRejection(services, {
      requestId: requestId ?? newId('req'),
      method: 'TOOL',
      routePattern: '(unknown tool)',
      statusCode: 404,
      errorCode: 'not_found',
      actor,
    });
    const why = unknownToolMessage(name, catalog, selection);
    throw new RpcError(RPC_INVALID_PARAMS, shownAs === name ? why : `${shownAs} calls ${name}: ${why}`);
  };

  return {
    tools,
    async admit(method, params, clientCapabilities) {
      const rule: MethodRule = METHOD_RULES[method];
      if (rule.kind === 'tool') {
        await selected(typeof params?.name === 'string' ? params.name : '', String(params?.name ?? ''));
        return;
      }
      if (rule.kind !== 'task') return;
      if (!declaresTasks(clientCapabilities)) {
        throw new MissingRequiredClientCapabilityError(
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
          `${method} needs the ${TASKS_EXTENSION} extension in the request's clientCapabilities`,
        );
      }
      const entry = await selected(rule.tool, method);
      if (rule.runs && needsConfirmation(entry.proc, actor, clientCapabilities)) {
        // a task method has no round for the person's answer: the tool itself asks it
        const run = typeof params?.taskId === 'string' ? runOfTaskId(services.secret, actor, params.taskId) : null;
        throw new RpcError(
          RPC_INVALID_PARAMS,
          `${method} cannot ask you to confirm, and ${rule.tool} needs a confirmation: call the tool ${rule.tool}` +
            `${run ? ` with roomId ${run.roomId} and runId ${run.runId}` : ''} instead. Nothing was changed.`,
          { tool: rule.tool, ...(run && { arguments: run }) },
        );
      }
    },
  };
}

/** The client capabilities a request's 2026-07-28 envelope declares (none on 2025). */
export const clientCapabilitiesOf = (ctx: ServerContext): unknown =>
  (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];

/**
 * The one way handlers are registered on an MCP server of /mcp: each is admitted by the connection's rights
 * first. A method without a rule in METHOD_RULES is refused here, when the server is built.
 */
export function serveMethods(server: Server, rights: ConnectionRights): Server['setRequestHandler'] {
  return ((method: string, ...rest: unknown[]) => {
    if (!Object.hasOwn(METHOD_RULES, method))
      throw new Error(
        `${method} has no rule in METHOD_RULES (mcp/server/connectionRights.ts): say what calling it needs`,
      );
    const handler = rest.pop() as (input: unknown, ctx: ServerContext) => unknown;
    // a method registered with its own params schema hands the handler its params; a spec method the request
    const ownSchema = rest.length > 0;
    const admitted = async (input: unknown, ctx: ServerContext) => {
      const params = ownSchema ? input : (input as { params?: unknown } | undefined)?.params;
      await rights.admit(method as McpMethod, params as Record<string, unknown> | undefined, clientCapabilitiesOf(ctx));
      return handler(input, ctx);
    };
    return (server.setRequestHandler as (...a: unknown[]) => unknown).call(server, method, ...rest, admitted);
  }) as Server['setRequestHandler'];
}
