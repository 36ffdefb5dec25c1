import type { Tool } from '@modelcontextprotocol/server';
import { errorCodesOf } from '../src/procedures/errorCodes.js';
import { listProcedures, type ProcedureInfo } from '../src/procedures/index.js';
import { toToolSchema } from './toolSchema.js';

/** The argument every write tool takes besides the procedure's input (REST: the `Idempotency-Key` header). */
export const IDEMPOTENCY_ARGUMENT = 'idempotencyKey';

const idempotencyKeySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Optional idempotency key (1-255 printable ASCII characters). Retrying with the same key and the same arguments within 24 hours replays the first result instead of acting twice.',
};

/** `_meta` key of a tool's error codes by HTTP status (`{"404": ["not_found", "room_not_found"], …}`). */
export const ERRORS_META = 'svc/errors';

/** One procedure as an MCP tool: the tool definition and the procedure it calls. */
export interface CatalogEntry {
  tool: Tool;
  proc: ProcedureInfo;
}

/** Every procedure as an MCP tool, keyed by tool name. */
export type ToolCatalog = Map<string, CatalogEntry>;

/** The tool definition of one procedure: names, schemas and annotations all read from its metadata. */
export function toolOf(proc: ProcedureInfo): Tool {
  const { meta } = proc;
  const inputSchema = toToolSchema(proc.input, 'input');
  if (!inputSchema) throw new Error(`Procedure ${proc.path} has no object input`);
  if (meta.kind === 'write') {
    inputSchema.properties = { ...inputSchema.properties, [IDEMPOTENCY_ARGUMENT]: idempotencyKeySchema };
  }
  const outputSchema = toToolSchema(proc.output, 'output');
  const read = meta.kind === 'read';
  return {
    name: meta.tool.name,
    title: meta.tool.title,
    description: meta.description,
    // (the SDK types a schema's values as JSON values; toToolSchema's are that, typed as objects)
    inputSchema: inputSchema as Tool['inputSchema'],
    // the success shape only: an error is an isError result without structuredContent (toolResult.ts)
    ...(outputSchema ? { outputSchema } : {}),
    annotations: {
      title: meta.tool.title,
      readOnlyHint: read,
      destructiveHint: !read && meta.destructive === true,
      idempotentHint: read || meta.idempotent === true,
      openWorldHint: false,
    },
    // the error codes a call can answer, by HTTP status: the same list the OpenAPI document gives the operation
    _meta: { [ERRORS_META]: errorCodesOf(meta, 'mcp') },
  };
}

/**
 * Builds the catalog from the procedure list (CONTRACT §5): every procedure that is not `restOnly` is a
 * tool named by its metadata. Nothing here names an operation, so new procedures appear on their own.
 */
export function buildToolCatalog(procedures: ProcedureInfo[] = listProcedures()): ToolCatalog {
  const catalog: ToolCatalog = new Map();
  for (const proc of procedures) {
    if (proc.meta.restOnly) continue;
    if (catalog.has(proc.meta.tool.name)) throw new Error(`Duplicate MCP tool name ${proc.meta.tool.name}`);
    catalog.set(proc.meta.tool.name, { tool: toolOf(proc), proc });
  }
  return catalog;
}

/** The tools a credential may call: `mcp:tools` is checked at the door, so only the operation's scope is left. */
export function toolsFor(catalog: ToolCatalog, scopes: readonly string[], agentRunId?: string): Tool[] {
  return [...catalog.values()]
    .filter((e) => (!e.proc.meta.scope || scopes.includes(e.proc.meta.scope)) && (!e.proc.meta.runOnly || agentRunId !== undefined))
    .map((e) => e.tool);
}
