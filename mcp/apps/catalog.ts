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
 * The tool list with each view's link (`_meta.ui.resourceUri`) on its tool. Only the link: the tool's text,
 * schemas and results stay as they are, so a host without Apps, and the model, see the same tool.
 */
export function withViews(tools: Tool[]): Tool[] {
  return tools.map((tool) => {
    const view = byTool.get(tool.name);
    return view ? { ...tool, _meta: { ...tool._meta, ui: { resourceUri: view.uri } } } : tool;
  });
}

/**
 * Whether a request's tool list links the views. A 2026-07-28 request declares its client's capabilities in its
 * envelope: the links go to a client that declared the extension, and to no other. A 2025 request carries no
 * capabilities (this server is stateless: what `initialize` declared is gone by the next request), so its list
 * links them always; the link is one short `_meta` field that a client without Apps ignores.
 */
export function linksViews(envelope: Record<string, unknown> | undefined, capabilitiesKey: string): boolean {
  return envelope ? declaresApps(envelope[capabilitiesKey]) : true;
}
