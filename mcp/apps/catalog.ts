import type { Tool } from '@modelcontextprotocol/server';

/** The MCP Apps extension (`@modelcontextprotocol/ext-apps`): tools that carry an interactive view. */
export const APPS_EXTENSION = 'io.modelcontextprotocol/ui';
/** The media type of a view: an HTML document the host renders in a sandboxed frame. */
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';

/** One view: the tool whose result it renders, its resource, and its entry point (mcp/apps/views/). */
export interface ViewEntry {
  tool: string;
  uri: `ui://svc/${string}`;
  name: string;
  title: string;
  description: string;
  /** The view's module under mcp/apps/views/, bundled into the document (bundle.ts). */
  entry: string;
}

/** The views, one per tool; a tool's list entry names its view by `_meta.ui.resourceUri`. */
export const VIEWS: readonly ViewEntry[] = [
  {
    tool: 'get_record',
    uri: 'ui://svc/record',
    name: 'record',
    title: 'Meeting record and its approval',
    description: 'A meeting record, its approval requests and decisions; approve or reject with a comment.',
    entry: 'record.ts',
  },
  {
    tool: 'list_tasks',
    uri: 'ui://svc/tasks',
    name: 'task-board',
    title: "A room's task board",
    description: 'The tasks of a room by status; move a task to another status or assign it.',
    entry: 'tasks.ts',
  },
  {
    tool: 'list_messages',
    uri: 'ui://svc/messages',
    name: 'conversation',
    title: "A room's conversation",
    description: 'The latest messages of a room with their authors and attachments, following new ones.',
    entry: 'messages.ts',
  },
];

const byTool = new Map(VIEWS.map((v) => [v.tool, v]));
const byUri = new Map<string, ViewEntry>(VIEWS.map((v) => [v.uri, v]));

export const viewOfTool = (tool: string): ViewEntry | undefined => byTool.get(tool);
export const viewOfUri = (uri: string): ViewEntry | undefined => byUri.get(uri);
export const isViewUri = (uri: string): boolean => uri.startsWith('ui://');

/** True when client capabilities declare the extension with the HTML profile (or without a list of types). */
export function declaresApps(clientCapabilities: unknown): boolean {
  const extensions = (clientCapabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  if (!extensions || typeof extensions !== 'object') return false;
  const settings = extensions[APPS_EXTENSION] as { mimeTypes?: unknown } | undefined;
  if (!settings || typeof settings !== 'object') return false;
  return !Array.isArray(settings.mimeTypes) || settings.mimeTypes.includes(VIEW_MIME_TYPE);
}

/**
 * Tools a view calls and the model is not offered (`_meta.ui.visibility: ["app"]`): the record view's approval
 * history. Listed only to a client that declared the extension; any connection whose scopes and selection allow
 * it may still call it (it reads what REST reads), so a host that forwards a view's calls unlisted works too.
 */
export const APP_ONLY_TOOLS: ReadonlySet<string> = new Set(['list_record_approvals']);
export const isAppOnly = (tool: string): boolean => APP_ONLY_TOOLS.has(tool);

/**
 * The tool list with each view's link (`_meta.ui.resourceUri`) on its tool, and the app-only tools marked so.
 * Only that: the tool's text, schemas and results stay as they are, so a host without Apps, and the model, see
 * the same tool.
 */
export function withViews(tools: Tool[]): Tool[] {
  return tools.map((tool) => {
    const view = byTool.get(tool.name);
    if (view) return { ...tool, _meta: { ...tool._meta, ui: { resourceUri: view.uri } } };
    return isAppOnly(tool.name) ? { ...tool, _meta: { ...tool._meta, ui: { visibility: ['app'] } } } : tool;
  });
}

/**
 * A request's tool list as MCP Apps shapes it. A 2026-07-28 request declares its client's capabilities in its
 * envelope: a client that declared the extension gets the views' links and the app-only tools, any other the
 * list as without Apps. A 2025 request carries no capabilities (this server is stateless: what `initialize`
 * declared is gone by the next request): its list links the views (one short `_meta` field that a client without
 * Apps ignores) and leaves the app-only tools out, since such a client would offer them to its model.
 */
export function appsToolList(
  tools: Tool[],
  envelope: Record<string, unknown> | undefined,
  capabilitiesKey: string,
): Tool[] {
  if (envelope && declaresApps(envelope[capabilitiesKey])) return withViews(tools);
  const offered = tools.filter((t) => !isAppOnly(t.name));
  return envelope ? offered : withViews(offered);
}

/** Whether a request's resource list names the views: a 2026-07-28 request whose client declared the extension. */
export function listsViews(envelope: Record<string, unknown> | undefined, capabilitiesKey: string): boolean {
  return !!envelope && declaresApps(envelope[capabilitiesKey]);
}
