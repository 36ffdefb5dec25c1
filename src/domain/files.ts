import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { EntityManager } from 'typeorm';
import { Message, StoredFile, Task } from '../../db/entities/index.js';
import { requireRoom } from './access.js';
import type { Actor } from './actor.js';
import { notFound, validationError } from './errors.js';
import { emitEvent } from './events.js';
import { newId } from './ids.js';
import { iso } from './time.js';

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
 * `file.uploaded` fires when the file is attached to a message or task (spec 6.1: "finalized").
 * If the transaction fails the caller removes the bytes with `discardUpload`.
 */
export async function uploadFile(m: EntityManager, now: Date, dataDir: string, actor: Actor, roomId: string, o: UploadOptions) {
  const room = await requireRoom(m, actor, roomId, 'write');
  if (o.messageId && o.taskId) throw validationError('Attach to a message or a task, not both', { field: 'taskId' });
  if (o.messageId && !(await m.countBy(Message, { id: o.messageId, roomId }))) throw notFound('Message');
  if (o.taskId && !(await m.countBy(Task, { id: o.taskId, roomId }))) throw notFound('Task');
  const id = newId('file', now.getTime());
  const file = m.create(StoredFile, {
    id, roomId, messageId: o.messageId ?? null, taskId: o.taskId ?? null, filename: o.filename, contentType: o.contentType,
    size: o.bytes.length, sha256: createHash('sha256').update(o.bytes).digest('hex'), storageKey: id,
    uploadedById: actor.userId, createdAt: iso(now),
  });
  const dir = filesDir(dataDir);
  await fs.promises.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${id}.tmp`);
  await fs.promises.writeFile(tmp, o.bytes);
  await fs.promises.rename(tmp, filePath(dataDir, file));
  await m.insert(StoredFile, file);
  if (file.messageId || file.taskId) {
    await emitEvent(m, { type: 'file.uploaded', room, object: { type: 'file', id: file.id }, actor, now });
  }
  return file;
}

export async function discardUpload(dataDir: string, fileId: string): Promise<void> {
  await fs.promises.rm(path.join(filesDir(dataDir), fileId), { force: true });
}

export async function getFile(m: EntityManager, actor: Actor, roomId: string, fileId: string): Promise<StoredFile> {
  await requireRoom(m, actor, roomId, 'read');
  const file = await m.findOneBy(StoredFile, { id: fileId, roomId });
  if (!file) throw notFound('File');
  return file;
}
