import type { Tool } from '@modelcontextprotocol/server';
import { ownErrorCodesOf } from '../../src/procedures/errorCodes.js';
import { listProcedures, type ProcedureInfo, type ProcedureMeta } from '../../src/procedures/index.js';
import { toToolSchema } from './toolSchema.js';
import { FIELDS_ARGUMENT, listFieldsOf } from './toolText.js';

/** The argument every write tool takes besides the procedure's input (REST: the `Idempotency-Key` header). */
export const IDEMPOTENCY_ARGUMENT = 'idempotencyKey';

/** What the pipeline accepts as an idempotency key (1-255 printable ASCII characters). */
export const IDEMPOTENCY_KEY_RULES = { minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' };

// what it is for, the name and the guide say (a tool list pays for a description on every write tool); its bounds,
// IDEMPOTENCY_KEY_RULES, are the pipeline's to enforce and report
const idempotencyKeySchema = { type: 'string' };

/**
 * `_meta` key of a tool's own error codes by HTTP status (`{"404": ["not_found", "room_not_found"], …}`): those
 * every call can answer (validation, credential, scope, rate limit, units, 5xx) and every write's idempotency
 * answers are left out, as the MCP guide says.
 */
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
  const fields = listFieldsOf(proc);
  if (fields) {
    // the model's budget for a list (with `limit`): which item fields its text shows (toolText.ts)
    inputSchema.properties = {
      ...inputSchema.properties,
      [FIELDS_ARGUMENT]: { type: 'string', description: `Fields to show: ${fields.slice(0, 2).join(',')}` },
    };
  }
  const outputSchema = toToolSchema(proc.output, 'output');
  const errors = ownErrorCodesOf(meta, 'mcp');
  return {
    name: meta.tool.name,
    title: meta.tool.title,
    description: meta.tool.description ?? meta.description,
    // (the SDK types a schema's values as JSON values; toToolSchema's are that, typed as objects)
    inputSchema: inputSchema as Tool['inputSchema'],
    // the success shape only: an error is an isError result without structuredContent (toolResult.ts)
    ...(outputSchema ? { outputSchema } : {}),
    annotations: annotationsOf(meta),
    // the tool's own error codes, by HTTP status: the OpenAPI document's list less the codes every call shares
    ...(Object.keys(errors).length ? { _meta: { [ERRORS_META]: errors } } : {}),
  };
}

/**
 * The tool's behaviour hints, every one stated (hosts that warn on an explicit `destructiveHint: true` find no
 * default to read): a read is read-only, not destructive and idempotent; a write is destructive and idempotent as its
 * metadata says. The title is the tool's own.
 */
export function annotationsOf(meta: ProcedureMeta): NonNullable<Tool['annotations']> {
  const read = meta.kind === 'read';
  return {
    readOnlyHint: read,
    destructiveHint: !read && meta.destructive === true,
    idempotentHint: read || meta.idempotent === true,
    openWorldHint: false,
  };
}

/**
 * Builds the catalog from the procedure list: every procedure that is not `restOnly` is a
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
    .filter(
      (e) =>
        (!e.proc.meta.scope || scopes.includes(e.proc.meta.scope)) &&
        (!e.proc.meta.runOnly || agentRunId !== undefined),
    )
    .map((e) => e.tool);
}
