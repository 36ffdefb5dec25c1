import fs from 'node:fs';
import type {
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { RoomObjectKind } from '../../src/domain/objectRooms.js';
import { MCP_INLINE_MAX } from '../../src/procedures/files.js';
import { invokeTool, type ToolCallOptions, type ToolOutcome } from '../tools/invokeTool.js';
import { RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, RpcError } from '../server/rpcError.js';
import type { ToolCatalog } from '../tools/toolCatalog.js';
import { errorEnvelope } from '../../src/http/envelope.js';

const ID = '([a-z]+_[0-9A-Za-z]{1,64})';
/** How many messages `svc://rooms/{roomId}/messages` holds: the newest ones. */
export const RECENT_MESSAGES = 50;

interface Template {
  template: ResourceTemplate;
  pattern: RegExp;
  /** The tool whose procedure reads it, and its arguments from the URI's variables. */
  tool: string;
  args: (ids: string[]) => Record<string, unknown>;
  /** The object of the room the URI names below it, if any: its id is the URI's second. */
  object?: RoomObjectKind;
}

/**
 * What agents read, as resource templates (MCP spec "Resources"). Each is read by calling a read tool's
 * procedure through `invokeTool`, the path every tool call takes: authentication, `mcp:tools` and the
 * operation's own scope (rooms:read, messages:read, records:read, files:read), the rate limit, units and
 * one audit row under the tool's name.
 */
const TEMPLATES: Template[] = [
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}',
      name: 'room',
      title: 'A room',
      description: 'A room (needs rooms:read).',
      mimeType: 'application/json',
    },
    pattern: new RegExp(`^svc://rooms/${ID}$`),
    tool: 'get_room',
    args: ([roomId]) => ({ roomId }),
  },
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}/messages',
      name: 'room-messages',
      title: 'Recent messages of a room',
      description: `The ${RECENT_MESSAGES} newest messages of a room, newest first (needs messages:read; page further with list_messages).`,
      mimeType: 'application/json',
    },
    pattern: new RegExp(`^svc://rooms/${ID}/messages$`),
    tool: 'list_messages',
    args: ([roomId]) => ({ roomId, order: 'desc', limit: RECENT_MESSAGES }),
  },
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}/tasks',
      name: 'room-tasks',
      title: 'Recent tasks of a room',
      description: `The ${RECENT_MESSAGES} newest tasks of a room, newest first (needs tasks:read; page further with list_tasks).`,
      mimeType: 'application/json',
    },
    pattern: new RegExp(`^svc://rooms/${ID}/tasks$`),
    tool: 'list_tasks',
    args: ([roomId]) => ({ roomId, order: 'desc', limit: RECENT_MESSAGES }),
  },
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}/records',
      name: 'room-records',
      title: 'Meeting records of a room',
      description: `The first ${RECENT_MESSAGES} meeting records of a room, oldest first (needs records:read; page further with list_records).`,
      mimeType: 'application/json',
    },
    pattern: new RegExp(`^svc://rooms/${ID}/records$`),
    tool: 'list_records',
    args: ([roomId]) => ({ roomId, limit: RECENT_MESSAGES }),
  },
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}/records/{recordId}',
      name: 'record',
      title: 'A meeting record',
      description: 'A meeting record with its approval state (needs records:read).',
      mimeType: 'application/json',
    },
    pattern: new RegExp(`^svc://rooms/${ID}/records/${ID}$`),
    tool: 'get_record',
    args: ([roomId, recordId]) => ({ roomId, recordId }),
    object: 'record',
  },
  {
    template: {
      uriTemplate: 'svc://rooms/{roomId}/files/{fileId}',
      name: 'file',
      title: "A file's content",
      description: `A file's content with its media type: text for UTF-8 text and JSON, else base64 (blob) up to ${MCP_INLINE_MAX} bytes; larger files are downloaded over REST (needs files:read).`,
    },
    pattern: new RegExp(`^svc://rooms/${ID}/files/${ID}$`),
    tool: 'get_file_content',
    args: ([roomId, fileId]) => ({ roomId, fileId }),
    object: 'file',
  },
];

export const resourceTemplates = (): ResourceTemplate[] => TEMPLATES.map((t) => t.template);

/**
 * A URI of one of the templates: the tool that reads it, the ids it names (room first) and the kind of the object
 * below the room it names, or null.
 */
export function resourceOf(uri: string): { tool: string; ids: string[]; object?: RoomObjectKind } | null {
  for (const t of TEMPLATES) {
    const m = t.pattern.exec(uri);
    if (m) return { tool: t.tool, ids: m.slice(1), object: t.object };
  }
  return null;
}

/** The resources a committed event changes, as URIs: what a subscription stream announces for it. */
export function changedBy(event: { type: string; roomId: string; objectId: string }): string[] {
  const room = `svc://rooms/${event.roomId}`;
  const [kind] = event.type.split('.');
  if (kind === 'message') return [`${room}/messages`];
  if (kind === 'task') return [`${room}/tasks`];
  if (kind === 'record' || kind === 'approval') return [`${room}/records`, `${room}/records/${event.objectId}`];
  if (kind === 'file') return [`${room}/files/${event.objectId}`];
  if (kind === 'room') return [room];
  return [];
}

/**
 * A refused read as a JSON-RPC error: not found and refused input are -32602 (MCP 2026-07-28 "Resources": on every
 * revision); the REST envelope is the error's data.
 */
function readError(uri: string, outcome: Extract<ToolOutcome, { ok: false }>): RpcError {
  const { error } = outcome;
  const data = { uri, ...errorEnvelope(error, outcome.requestId) };
  if (error.code === 'not_found' || error.code === 'room_not_found')
    return new RpcError(RPC_INVALID_PARAMS, `Resource not found: ${error.message}`, data);
  if (error.code === 'validation_error') return new RpcError(RPC_INVALID_PARAMS, error.message, data);
  return new RpcError(error.status >= 500 ? RPC_INTERNAL_ERROR : RPC_INVALID_PARAMS, error.message, data);
}

/** `resources/read`: the URI's template, its procedure called as a tool, the output (or the file) as contents. */
export async function readResource(
  uri: string,
  catalog: ToolCatalog,
  call: ToolCallOptions,
  onOutcome?: (o: ToolOutcome) => void,
): Promise<ReadResourceResult> {
  for (const t of TEMPLATES) {
    const m = t.pattern.exec(uri);
    if (!m) continue;
    const entry = catalog.get(t.tool)!;
    const outcome = await invokeTool(entry.proc, t.args(m.slice(1)), call);
    onOutcome?.(outcome);
    if (!outcome.ok) throw readError(uri, outcome);
    const _meta = { 'svc/requestId': outcome.requestId };
    if (t.tool !== 'get_file_content') {
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(outcome.data) }], _meta };
    }
    const download = outcome.out.download!;
    const block = outcome.out.toolContent?.[0];
    if (block?.type === 'resource' && 'text' in block.resource) {
      return { contents: [{ uri, mimeType: download.contentType, text: block.resource.text }], _meta };
    }
    if (download.size > MCP_INLINE_MAX) {
      const downloadUrl = (outcome.data as { downloadUrl: string }).downloadUrl;
      throw new RpcError(
        RPC_INVALID_PARAMS,
        `The file is larger than ${MCP_INLINE_MAX} bytes; download it over REST: ${downloadUrl}`,
        {
          uri,
          downloadUrl,
          size: download.size,
          maxBytes: MCP_INLINE_MAX,
        },
      );
    }
    const blob = (await fs.promises.readFile(download.path)).toString('base64');
    return { contents: [{ uri, mimeType: download.contentType, blob }], _meta };
  }
  throw new RpcError(RPC_INVALID_PARAMS, `Resource not found: ${uri} matches no resource template`, { uri });
}

/** `resources/list`: the caller's rooms (a page of list_rooms; the cursor passes through), none without rooms:read. */
export async function listResources(
  catalog: ToolCatalog,
  call: ToolCallOptions,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const entry = catalog.get('list_rooms')!;
  if (!call.actor?.scopes.includes('rooms:read')) return { resources: [] };
  const outcome = await invokeTool(entry.proc, cursor ? { cursor } : {}, call);
  if (!outcome.ok) throw readError('svc://rooms', outcome);
  const page = outcome.data as { data: { id: string; name: string }[]; nextCursor: string | null };
  return {
    resources: page.data.map((r) => ({
      uri: `svc://rooms/${r.id}`,
      name: r.name,
      title: r.name,
      mimeType: 'application/json',
    })),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}
