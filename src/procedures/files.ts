import fs from 'node:fs';
import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { discardUpload, filePath, getFile, uploadFile } from '../domain/files.js';
import { isMediaType, MAX_MEDIA_TYPE, servableMediaType } from '../domain/mediaType.js';
import { idOf } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { inTransaction } from './tx.js';
import { FileView, toFile } from './views.js';

/** Largest file the MCP tool returns inline as base64; larger ones are downloaded over REST. */
const MCP_INLINE_MAX = 1024 * 1024;
/** Half of a surrogate pair on its own: not Unicode, and `encodeURIComponent` (the download's filename*) throws on it. */
const LONE_SURROGATE = /\p{Cs}/u;

export const filesRouter = router({
  upload: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms/{roomId}/files', successStatus: 201, rawBody: { field: 'contentBase64', contentTypeField: 'contentType' } },
      tool: { name: 'upload_file', title: 'Upload a file' },
      summary: 'Upload a file',
      description:
        'REST: the request body is the file\'s bytes, with their Content-Type (any media type; it is stored and served back on download); `filename` and optionally `messageId` or `taskId` are query parameters. MCP: the bytes as base64. A file attaches to a message or a task of the room, not both (both: 400 rule_violation). Fires file.uploaded when attached to a message or task.',
      tags: ['files'], scope: 'files:write', units: 5, kind: 'write', errors: ['not_found', 'room_not_found', 'forbidden', 'payload_too_large', 'insufficient_storage', 'rule_violation'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        filename: z.string().min(1).max(255).regex(/^[^/\\\0]+$/, 'must not contain path separators')
          .refine((f) => !LONE_SURROGATE.test(f), 'must be well-formed Unicode').meta({ description: 'The file\'s name, without / or \\', example: 'minutes.pdf' }),
        contentType: z.string().max(MAX_MEDIA_TYPE).refine(isMediaType, 'must be a media type (RFC 9110: type/subtype; name=value)').meta({
          description: 'A media type (RFC 9110): `type/subtype` and `; name=value` parameters (token or quoted-string values), no control characters, Latin-1 only. Stored normalized.',
          example: 'application/pdf',
        }),
        contentBase64: z.base64().meta({ description: 'The bytes, base64 (MCP); REST sends the raw body instead' }),
        messageId: idOf('msg').optional().meta({ description: 'Attach to this message of the room (not with taskId)' }),
        taskId: idOf('task').optional().meta({ description: 'Attach to this task of the room (not with messageId)' }),
      }),
    )
    .output(FileView)
    .mutation(async ({ ctx, input }) => {
      const bytes = Buffer.from(input.contentBase64, 'base64');
      const max = ctx.services.config.maxUploadBytes;
      if (bytes.length > max) throw new DomainError('payload_too_large', `Files are limited to ${max} bytes`, { details: { maxBytes: max } });
      const now = ctx.services.now();
      let fileId: string | undefined;
      try {
        const file = await inTransaction(ctx.services, async (m) => {
          const f = await uploadFile(m, now, ctx.services.config.dataDir, ctx.actor, input.roomId, {
            filename: input.filename, contentType: input.contentType, bytes, messageId: input.messageId, taskId: input.taskId,
          });
          fileId = f.id;
          return f;
        });
        return toFile(file);
      } catch (err) {
        if (fileId) await discardUpload(ctx.services.config.dataDir, fileId);
        throw err;
      }
    }),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/files/{fileId}' }, tool: { name: 'get_file', title: 'Get file metadata' },
      summary: 'Get file metadata', description: 'Metadata of one file.',
      tags: ['files'], scope: 'files:read', units: 1, kind: 'read', errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), fileId: idOf('file') }))
    .output(FileView)
    .query(async ({ ctx, input }) => toFile(await getFile(ctx.services.ds.manager, ctx.actor, input.roomId, input.fileId))),

  content: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/files/{fileId}/content', download: true },
      tool: { name: 'get_file_content', title: 'Download a file' },
      summary: 'Download a file',
      description: `REST streams the bytes with their Content-Type. The MCP tool returns them as base64 up to ${MCP_INLINE_MAX} bytes.`,
      tags: ['files'], scope: 'files:read', units: 2, kind: 'read', errors: ['not_found', 'room_not_found', 'payload_too_large'],
    })
    .input(z.strictObject({ roomId: idOf('room'), fileId: idOf('file') }))
    .output(z.object({ file: FileView, contentBase64: z.string().nullable().meta({ description: 'MCP only; null over REST, which streams' }) }))
    .query(async ({ ctx, input }) => {
      const file = await getFile(ctx.services.ds.manager, ctx.actor, input.roomId, input.fileId);
      const path = filePath(ctx.services.config.dataDir, file);
      if (ctx.surface === 'rest') {
        // (a stored type that is not a strict media type, from before uploads were checked, is served as bytes)
        ctx.out.download = { path, contentType: servableMediaType(file.contentType), size: file.size, filename: file.filename.replace(/\p{Cs}/gu, '\ufffd'), sha256: file.sha256 };
        return { file: toFile(file), contentBase64: null };
      }
      if (file.size > MCP_INLINE_MAX) {
        throw new DomainError('payload_too_large', 'File too large to return inline; download it over REST', { details: { maxBytes: MCP_INLINE_MAX } });
      }
      return { file: toFile(file), contentBase64: (await fs.promises.readFile(path)).toString('base64') };
    }),
});
