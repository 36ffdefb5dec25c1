import type { ProcedureMeta } from '../../src/procedures/meta.js';
import { MCP_READONLY_HEADER, MCP_TOOLSETS_HEADER } from '../../src/http/headers.js';
import type { ToolCatalog } from './toolCatalog.js';

/**
 * Toolsets: a client narrows the tools of its connection to groups (as the GitHub MCP server does), with
 * `X-MCP-Toolsets: messages,tasks` and `X-MCP-Readonly: true`, or the same selection in the URL
 * (`/mcp?toolsets=messages,tasks&readonly=true`) for clients that cannot set headers. The query string is
 * not part of the resource: OAuth discovery and the token's audience stay `<BASE_URL>/mcp`. A selection only
 * hides tools; scopes still decide what a credential may call.
 */

export const TOOLSETS = [
  'me',
  'rooms',
  'messages',
  'tasks',
  'records',
  'files',
  'webhooks',
  'events',
  'agents',
  'search',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

/** The connection option headers as Node hands them over (lower case). */
export const TOOLSETS_HEADER = MCP_TOOLSETS_HEADER.toLowerCase();
export const READONLY_HEADER = MCP_READONLY_HEADER.toLowerCase();
export const TOOLSETS_PARAM = 'toolsets';
export const READONLY_PARAM = 'readonly';

/** What a connection selected: toolsets (null: all) and read-only. */
export interface ToolSelection {
  toolsets: ReadonlySet<Toolset> | null;
  readOnly: boolean;
}

export const ALL_TOOLS: ToolSelection = Object.freeze({ toolsets: null, readOnly: false });

/** A selection that cannot be read: the message names the argument and its valid values. */
export interface SelectionError {
  error: string;
  /** The header or query parameter at fault. */
  field: string;
  valid: readonly string[];
}

const isToolset = (s: string): s is Toolset => (TOOLSETS as readonly string[]).includes(s);

/**
 * A procedure's toolset: its `toolset`, else its first tag (organizations are the caller's own: `me`). A tag
 * that is no toolset leaves the tool reachable with `all` only (test/mcp/toolsets.test.ts flags it).
 */
export function toolsetOf(meta: ProcedureMeta): string {
  return meta.toolset ?? meta.tags[0] ?? '';
}

type Source = { header?: string | string[]; query?: unknown };

/** The selection headers' names with everything but letters left out: what another spelling of them comes to. */
const NEAR_HEADERS = ['xmcptoolsets', 'xmcptoolset', 'xmcpreadonly'];
/** A header name whose letters begin `xmcp` (a necessary condition for NEAR_HEADERS, tested without a copy). */
const NEAR_SPELLING = /^[^a-z]*x[^a-z]*m[^a-z]*c[^a-z]*p/;

/** One value from a header or a query parameter; a repeated one is an error (which one would win is a guess). */
function single(name: string, s: Source): { value?: string } | SelectionError {
  const values = [s.header, s.query].flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
  if (values.some((v) => typeof v !== 'string')) return { error: `${name} must be a string`, field: name, valid: [] };
  const distinct = [...new Set(values as string[])];
  if (distinct.length > 1) {
    return {
      error: `${name} is given more than once with different values (${distinct.map((v) => JSON.stringify(v)).join(', ')}): give it once`,
      field: name,
      valid: [],
    };
  }
  return { value: distinct[0] };
}

/**
 * The selection of a request from its headers and query (`toolsets`, `readonly`). Absent: every tool. An
 * unknown toolset, an empty list or a read-only flag other than true/false is an error naming the valid
 * values, never an empty tool list. The query of /mcp carries the selection and nothing else: any other
 * parameter (`readOnly`, `readonly[]`, `toolset`…) is an error too, since a selection spelled another way
 * would otherwise be ignored and the connection left read-write with every tool.
 */
export function parseToolSelection(
  headers: Record<string, string | string[] | undefined>,
  query: Record<string, unknown>,
): ToolSelection | SelectionError {
  const params = [TOOLSETS_PARAM, READONLY_PARAM];
  const unknownParam = Object.keys(query).find((k) => !params.includes(k));
  if (unknownParam !== undefined) {
    return {
      error:
        `Unknown query parameter ${JSON.stringify(unknownParam)}: /mcp takes only ${params.join(' and ')}, spelled so ` +
        `(e.g. /mcp?${TOOLSETS_PARAM}=messages,tasks&${READONLY_PARAM}=true)`,
      field: unknownParam,
      valid: params,
    };
  }
  // a header is matched whatever its case; one spelled another way (X-MCP-Read-Only, X-MCP-Toolset) is refused
  const misspelt = Object.keys(headers).find(
    (h) =>
      h !== TOOLSETS_HEADER &&
      h !== READONLY_HEADER &&
      NEAR_SPELLING.test(h) &&
      NEAR_HEADERS.includes(h.replace(/[^a-z]/g, '')),
  );
  if (misspelt !== undefined) {
    return {
      error: `Unknown header ${misspelt}: the selection headers are ${MCP_TOOLSETS_HEADER} and ${MCP_READONLY_HEADER}`,
      field: misspelt,
      valid: [MCP_TOOLSETS_HEADER, MCP_READONLY_HEADER],
    };
  }
  // neither header nor parameter: every tool, read-write (the common case, without building anything)
  if (
    headers[TOOLSETS_HEADER] === undefined &&
    headers[READONLY_HEADER] === undefined &&
    query[TOOLSETS_PARAM] === undefined &&
    query[READONLY_PARAM] === undefined
  )
    return ALL_TOOLS;
  const sets = single(`${TOOLSETS_HEADER} / ?${TOOLSETS_PARAM}`, {
    header: headers[TOOLSETS_HEADER],
    query: query[TOOLSETS_PARAM],
  });
  if ('error' in sets) return sets;
  const ro = single(`${READONLY_HEADER} / ?${READONLY_PARAM}`, {
    header: headers[READONLY_HEADER],
    query: query[READONLY_PARAM],
  });
  if ('error' in ro) return ro;
  const validSets = ['all', ...TOOLSETS];
  let toolsets: Set<Toolset> | null = null;
  if (sets.value !== undefined) {
    const names = sets.value.split(',').map((n) => n.trim().toLowerCase());
    if (names.every((n) => n === '')) {
      return {
        error: `The toolset list is empty: give a comma-separated list of ${validSets.join(', ')} (e.g. messages,tasks)`,
        field: 'toolsets',
        valid: validSets,
      };
    }
    const unknown = names.filter((n) => n !== 'all' && !isToolset(n));
    if (unknown.length) {
      return {
        error: `Unknown toolset ${unknown.map((n) => JSON.stringify(n)).join(', ')}: valid toolsets are ${validSets.join(', ')} (e.g. messages,tasks)`,
        field: 'toolsets',
        valid: validSets,
      };
    }
    if (!names.includes('all')) toolsets = new Set(names.filter(isToolset));
  }
  let readOnly = false;
  if (ro.value !== undefined) {
    const v = ro.value.trim().toLowerCase();
    if (v !== 'true' && v !== 'false')
      return {
        error: `Read-only must be true or false, not ${JSON.stringify(ro.value)}`,
        field: 'readonly',
        valid: ['true', 'false'],
      };
    readOnly = v === 'true';
  }
  return { toolsets, readOnly };
}

/** Whether a selection shows a tool. */
export function isSelected(meta: ProcedureMeta, selection: ToolSelection): boolean {
  if (selection.readOnly && meta.kind !== 'read') return false;
  return !selection.toolsets || selection.toolsets.has(toolsetOf(meta) as Toolset);
}

const keyOf = (s: ToolSelection) =>
  `${s.readOnly ? 'ro' : 'rw'}:${s.toolsets ? [...s.toolsets].sort().join(',') : 'all'}`;
const selected = new WeakMap<ToolCatalog, Map<string, ToolCatalog>>();

/**
 * The catalog as a selection sees it: the tools it shows, for tools/list and tools/call alike (a call to
 * any other is answered as an unknown tool). Built once per catalog and selection (at most 2 × 2^10).
 */
export function selectTools(catalog: ToolCatalog, selection: ToolSelection = ALL_TOOLS): ToolCatalog {
  if (!selection.readOnly && !selection.toolsets) return catalog;
  let byKey = selected.get(catalog);
  if (!byKey) selected.set(catalog, (byKey = new Map()));
  const key = keyOf(selection);
  let sub = byKey.get(key);
  if (!sub) {
    sub = new Map([...catalog].filter(([, e]) => isSelected(e.proc.meta, selection)));
    byKey.set(key, sub);
  }
  return sub;
}

/** Why a tool name is not callable on this connection: unknown, or outside its selection (and how to reach it). */
export function unknownToolMessage(name: string, catalog: ToolCatalog, selection: ToolSelection = ALL_TOOLS): string {
  const entry = catalog.get(name);
  if (!entry) return `Unknown tool: ${name}`;
  if (selection.readOnly && entry.proc.meta.kind !== 'read') {
    return `Unknown tool: ${name} is a write tool and this connection is read-only (X-MCP-Readonly: true); tools/list shows the tools it may call`;
  }
  return `Unknown tool: ${name} is in toolset ${toolsetOf(entry.proc.meta)}, outside this connection's toolsets (${[...(selection.toolsets ?? [])].join(', ')}); tools/list shows the tools it may call`;
}
