import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { EntityManager } from 'typeorm';
import type { StoredFile } from '../../db/entities/index.js';
import { fileById, filesPage, insertFile, namedStorageKeys } from '../../db/stores/files.js';
import { messageInRoom } from '../../db/stores/messages.js';
import { taskInRoom } from '../../db/stores/tasks.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { DomainError, notFound, ruleViolation, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { readPage, type PageInput } from './paging.js';
import { normalizeMediaType } from './mediaType.js';
import { iso } from './time.js';

export type { StoredFile } from '../../db/entities/index.js';

export interface UploadOptions {
  filename: string;
  contentType: string;
  bytes: Buffer;
  messageId?: string;
  taskId?: string;
}

const filesDir = (dataDir: string) => path.join(dataDir, 'files');
/** Where a file's bytes live. The storage key is the file id, never a client-chosen name. */
export const filePath = (dataDir: string, f: StoredFile) => path.join(filesDir(dataDir), f.storageKey);

/**
 * Stores an upload: bytes to disk first (temp file, then rename), metadata in the caller's transaction.
 * `file.uploaded` fires when the file is attached to a message or task, not at upload.
 * If the transaction fails the caller removes the bytes with `discardUpload`.
 */
export async function uploadFile(
  m: EntityManager,
  now: Date,
  dataDir: string,
  actor: Actor,
  roomId: string,
  o: UploadOptions,
) {
  const room = await requireRoom(m, actor, roomId, 'write');
  if (o.messageId && o.taskId) throw ruleViolation('Attach to a message or a task, not both', { field: 'taskId' });
  if (o.messageId && !(await messageInRoom(m, roomId, o.messageId))) throw notFound('Message');
  if (o.taskId && !(await taskInRoom(m, roomId, o.taskId))) throw notFound('Task');
  // every surface ends here: the stored type is what a download sends back as its Content-Type header
  const contentType = normalizeMediaType(o.contentType);
  if (!contentType)
    throw validationError('contentType must be a media type (RFC 9110: type/subtype; name=value)', {
      field: 'contentType',
    });
  const id = newId('file', now.getTime());
  const file: StoredFile = {
    id,
    roomId,
    messageId: o.messageId ?? null,
    taskId: o.taskId ?? null,
    filename: o.filename,
    contentType,
    size: o.bytes.length,
    sha256: createHash('sha256').update(o.bytes).digest('hex'),
    storageKey: id,
    uploadedById: actor.userId,
    createdAt: iso(now),
  };
  const dir = filesDir(dataDir);
  await fs.promises.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${id}.tmp`);
  try {
    await fs.promises.writeFile(tmp, o.bytes);
    await fs.promises.rename(tmp, filePath(dataDir, file));
  } catch (err) {
    // a failed write leaves no partial bytes behind
    await fs.promises.rm(tmp, { force: true });
    throw storageError(err);
  }
  const stored = await insertFile(m, file);
  if (stored.messageId || stored.taskId) {
    await emitEvent(m, { type: 'file.uploaded', room, object: { type: 'file', id: stored.id }, actor, now });
  }
  return stored;
}

/** A full disk (or quota) is 507 `insufficient_storage`: nothing was stored, and no path reaches the client. */
function storageError(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code !== 'ENOSPC' && code !== 'EDQUOT') return err;
  return new DomainError('insufficient_storage', 'There is no space left to store this file; nothing was stored', {
    cause: err,
  });
}

export async function discardUpload(dataDir: string, fileId: string): Promise<void> {
  await fs.promises.rm(path.join(filesDir(dataDir), fileId), { force: true });
}

/** How old unnamed bytes must be before a sweep removes them: longer than any upload still in flight takes. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/**
 * Removes bytes under `<DATA_DIR>/files` that no file row names: what an upload leaves when its process is
 * killed between writing the bytes and committing the row, or a temporary file of a write cut off. Only
 * entries older than `graceMs` are touched, so an upload in flight (here, or in another process sharing
 * DATA_DIR) is never swept. Returns how many entries were removed.
 */
export async function sweepOrphanedUploads(
  m: EntityManager,
  dataDir: string,
  now: Date,
  graceMs = ORPHAN_GRACE_MS,
): Promise<number> {
  const dir = filesDir(dataDir);
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return 0;
  }
  const old: string[] = [];
  for (const name of names) {
    const stat = await fs.promises.stat(path.join(dir, name)).catch(() => null);
    if (stat?.isFile() && stat.mtimeMs < now.getTime() - graceMs) old.push(name);
  }
  const keys = old.filter((n) => !n.startsWith('.'));
  const named = await namedStorageKeys(m, keys);
  const orphans = old.filter((n) => !named.has(n));
  for (const n of orphans) await fs.promises.rm(path.join(dir, n), { force: true });
  return orphans.length;
}

/** The files of a room the actor can read, oldest first, a page at a time. */
export async function listFiles(m: EntityManager, actor: Actor, roomId: string, page: PageInput, secret: string) {
  await requireRoom(m, actor, roomId, 'read');
  return readPage<StoredFile>(
    page,
    secret,
    (r) => r.id,
    (bounds) => filesPage(m, roomId, bounds),
  );
}

export async function getFile(m: EntityManager, actor: Actor, roomId: string, fileId: string): Promise<StoredFile> {
  await requireRoom(m, actor, roomId, 'read');
  const file = await fileById(m, roomId, fileId);
  if (!file) throw notFound('File');
  return file;
}
