import { inWriteTransaction } from '../auth/idempotency.js';
import fs from 'node:fs';
import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { discardUpload, filePath, getFile, listFiles, uploadFile } from '../domain/files.js';
import { isMediaType, MAX_MEDIA_TYPE, servableMediaType } from '../domain/mediaType.js';
import { forModel, idOf, listOf, pageInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import type { CatalogEntry } from '../domain/catalogEntry.js';
import type { StoredFile } from '../../db/entities/index.js';

// The public shape of a file's metadata, and the one mapping from the entity to it.
export const FileView = z
  .object({
    id: idOf('file'),
    roomId: idOf('room'),
    messageId: idOf('msg').nullable(),
    taskId: idOf('task').nullable(),
    filename: z.string(),
    contentType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    uploadedById: idOf('usr'),
    createdAt: timestamp,
  })
  .meta({ id: 'FileMetadata' });
/** (the content type as a download serves it: a stored one that is not a strict media type reads as octet-stream) */
export const toFile = (f: StoredFile): z.infer<typeof FileView> => ({
  id: f.id,
  roomId: f.roomId,
  messageId: f.messageId,
  taskId: f.taskId,
  filename: f.filename,
  contentType: servableMediaType(f.contentType),
  size: f.size,
  sha256: f.sha256,
  uploadedById: f.uploadedById,
  createdAt: f.createdAt,
});

/** Largest image the MCP tool returns inline (an image block) and largest file `resources/read` returns as a blob. */
export const MCP_INLINE_MAX = 1024 * 1024;
/** Largest text file the MCP tool embeds as a text resource; larger text comes as a resource link. */
export const MCP_TEXT_MAX = 256 * 1024;
/**
 * Half of a surrogate pair on its own: not Unicode, and `encodeURIComponent` (the download's filename*) throws on it.
 */
const LONE_SURROGATE = /\p{Cs}/u;

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
export const fileEvents = [
  {
    type: 'file.uploaded',
    objectType: 'file',
    description: 'A file attached to a message or task was finalized',
    stable: true,
    v1: false,
    trigger: { cannot: 'it needs an upload attached to a message or task (POST /v1/rooms/{roomId}/files)' },
  },
] as const satisfies readonly CatalogEntry[];

export const filesRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/files' },
      tool: { name: 'list_files', title: 'List files', description: 'Files of a room, oldest first.' },
      summary: 'List the files of a room',
      description: 'Metadata of the files of a room, oldest first.',
      tags: ['files'],
      scope: 'files:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(listOf(FileView))
    .query(async ({ ctx, input }) => {
      const page = await listFiles(ctx.services.ds.manager, ctx.actor, input.roomId, input, ctx.services.secret);
      return { data: page.data.map(toFile), nextCursor: page.nextCursor };
    }),

  upload: apiProcedure
    .meta({
      http: {
        method: 'POST',
        path: '/v1/rooms/{roomId}/files',
        successStatus: 201,
        rawBody: { field: 'contentBase64', contentTypeField: 'contentType', mcpOnly: ['text'] },
      },
      tool: {
        name: 'upload_file',
        title: 'Upload a file',
        description:
          'Stores a file in a room from `text` or `contentBase64` (exactly one), optionally attached to a message or a task.',
      },
      summary: 'Upload a file',
      description:
        "REST: the request body is the file's bytes, with their Content-Type (any media type; it is stored and served back on download); `filename` and optionally `messageId` or `taskId` are query parameters. MCP: exactly one of `text` (the content as UTF-8 text) or `contentBase64` (the bytes as base64). A file attaches to a message or a task of the room, not both (both: 400 rule_violation). Fires file.uploaded when attached to a message or task.",
      tags: ['files'],
      scope: 'files:write',
      units: 5,
      kind: 'write',
      errors: [
        'not_found',
        'room_not_found',
        'forbidden',
        'payload_too_large',
        'insufficient_storage',
        'rule_violation',
      ],
    })
    .input(
      z
        .strictObject({
          roomId: idOf('room'),
          filename: z
            .string()
            .min(1)
            .max(255)
            .regex(/^[^/\\\0]+$/, 'must not contain path separators')
            .refine((f) => !LONE_SURROGATE.test(f), 'must be well-formed Unicode')
            .meta({ description: "The file's name, without / or \\", example: 'minutes.pdf' }),
          contentType: forModel(
            z
              .string()
              .max(MAX_MEDIA_TYPE)
              .refine(isMediaType, 'must be a media type (RFC 9110: type/subtype; name=value)')
              .meta({
                description:
                  'A media type (RFC 9110): `type/subtype` and `; name=value` parameters (token or quoted-string values), no control characters, Latin-1 only. Stored normalized.',
                example: 'application/pdf',
              }),
            'Media type, e.g. text/markdown',
          ),
          contentBase64: z.base64().optional().meta({ description: 'The bytes, base64' }),
          text: z
            .string()
            .max(16 * 1024 * 1024)
            .optional()
            .meta({ description: 'The content as text, stored as UTF-8' }),
          messageId: idOf('msg')
            .optional()
            .meta({ description: 'Attach to this message of the room (not with taskId)' }),
          taskId: idOf('task').optional().meta({ description: 'Attach to this task of the room (not with messageId)' }),
        })
        .refine((i) => (i.contentBase64 === undefined) !== (i.text === undefined), {
          message: 'give exactly one of contentBase64 and text',
          path: ['contentBase64'],
        })
        .meta({ oneOf: [{ required: ['contentBase64'] }, { required: ['text'] }] }),
    )
    .output(FileView)
    .mutation(async ({ ctx, input }) => {
      const bytes =
        input.text !== undefined ? Buffer.from(input.text, 'utf8') : Buffer.from(input.contentBase64 ?? '', 'base64');
      const max = ctx.services.config.maxUploadBytes;
      if (bytes.length > max)
        throw new DomainError('payload_too_large', `Files are limited to ${max} bytes`, { details: { maxBytes: max } });
      const now = ctx.services.now();
      let fileId: string | undefined;
      try {
        return await inWriteTransaction(ctx, async (m) => {
          const f = await uploadFile(m, now, ctx.services.config.dataDir, ctx.actor, input.roomId, {
            filename: input.filename,
            contentType: input.contentType,
            bytes,
            messageId: input.messageId,
            taskId: input.taskId,
          });
          fileId = f.id;
          return toFile(f);
        });
      } catch (err) {
        if (fileId) await discardUpload(ctx.services.config.dataDir, fileId);
        throw err;
      }
    }),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/files/{fileId}' },
      tool: { name: 'get_file', title: 'Get file metadata', description: 'Metadata of one file.' },
      summary: 'Get file metadata',
      description: 'Metadata of one file.',
      tags: ['files'],
      scope: 'files:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), fileId: idOf('file') }))
    .output(FileView)
    .query(async ({ ctx, input }) =>
      toFile(await getFile(ctx.services.ds.manager, ctx.actor, input.roomId, input.fileId)),
    ),

  content: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/files/{fileId}/content', download: true },
      tool: {
        name: 'get_file_content',
        title: 'Download a file',
        description: "A file's content: an image, embedded text or a resource link, by size and type.",
      },
      summary: 'Download a file',
      description:
        `REST streams the bytes with their Content-Type. The MCP tool returns them as content blocks: an image (images up to ${MCP_INLINE_MAX} bytes), ` +
        `an embedded text resource (UTF-8 text and JSON up to ${MCP_TEXT_MAX} bytes), or else a resource link (\`svc://\` resource or REST download URL); ` +
        "the structured result is the file's metadata and how its content was delivered.",
      tags: ['files'],
      scope: 'files:read',
      units: 2,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), fileId: idOf('file') }))
    .output(
      z.object({
        file: FileView,
        delivery: z
          .enum(['image', 'text', 'link', 'stream'])
          .meta({ description: 'MCP: image block, embedded text resource or resource link; REST: stream' }),
        resourceUri: z.string().meta({
          description: 'The file as an MCP resource (resources/read)',
          examples: ['svc://rooms/room_01KAR3V6X5Q2Z8N4M7P9W1T3YB/files/file_01KAR3V6X5Q2Z8N4M7P9W1T3YB'],
        }),
        downloadUrl: z.string().meta({ description: 'The REST download (any size)' }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const file = await getFile(ctx.services.ds.manager, ctx.actor, input.roomId, input.fileId);
      const path = filePath(ctx.services.config.dataDir, file);
      const view = toFile(file);
      const resourceUri = fileResourceUri(file.roomId, file.id);
      const downloadUrl = `${ctx.services.config.baseUrl}/v1/rooms/${file.roomId}/files/${file.id}/content`;
      // the file to stream (REST) or to read as an MCP resource; (a stored type that is not a strict media type,
      // from before uploads were checked, is served as bytes)
      ctx.out.download = {
        path,
        contentType: servableMediaType(file.contentType),
        size: file.size,
        filename: file.filename.replace(/\p{Cs}/gu, '\ufffd'),
        sha256: file.sha256,
      };
      if (ctx.surface === 'rest') {
        return { file: view, delivery: 'stream' as const, resourceUri, downloadUrl };
      }
      const content = await fileContent(path, view);
      const link = {
        type: 'resource_link' as const,
        name: view.filename,
        title: view.filename,
        mimeType: view.contentType,
        size: view.size,
      };
      if (content.kind === 'text') {
        ctx.out.toolContent = [
          { type: 'resource', resource: { uri: resourceUri, mimeType: view.contentType, text: content.text } },
        ];
      } else if (content.kind === 'image') {
        ctx.out.toolContent = [{ type: 'image', data: content.base64, mimeType: view.contentType }];
      } else {
        // binary or large: a link to read it (the MCP resource up to MCP_INLINE_MAX bytes, else the REST download)
        ctx.out.toolContent = [{ ...link, uri: view.size <= MCP_INLINE_MAX ? resourceUri : downloadUrl }];
      }
      return { file: view, delivery: content.kind, resourceUri, downloadUrl };
    }),
});

/** The MCP resource URI of a file (resources/read). */
export const fileResourceUri = (roomId: string, fileId: string) => `svc://rooms/${roomId}/files/${fileId}`;

/** Media types whose bytes are text when they decode as UTF-8: text/*, JSON and XML (with +json/+xml suffixes). */
const TEXTUAL =
  /^(?:text\/[^;]+|application\/(?:[\w.+-]+\+)?(?:json|xml)|application\/(?:javascript|x-ndjson|yaml|x-yaml|toml))(?:;|$)/i;
/** Images MCP clients render (MCP spec: image content). */
const IMAGE = /^image\/(?:png|jpeg|gif|webp)(?:;|$)/i;

/**
 * How the MCP surface hands a file's content to a model: UTF-8 text of a textual type up to MCP_TEXT_MAX
 * bytes as text, an image up to MCP_INLINE_MAX bytes as base64, anything else (binary, larger, text that is
 * not valid UTF-8) as a link. Reads the file only when it is delivered inline.
 */
export async function fileContent(
  path: string,
  file: { contentType: string; size: number },
): Promise<{ kind: 'text'; text: string } | { kind: 'image'; base64: string } | { kind: 'link' }> {
  if (TEXTUAL.test(file.contentType) && file.size <= MCP_TEXT_MAX) {
    const bytes = await fs.promises.readFile(path);
    try {
      return { kind: 'text', text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
    } catch {
      return { kind: 'link' };
    }
  }
  if (IMAGE.test(file.contentType) && file.size <= MCP_INLINE_MAX)
    return { kind: 'image', base64: (await fs.promises.readFile(path)).toString('base64') };
  return { kind: 'link' };
}
