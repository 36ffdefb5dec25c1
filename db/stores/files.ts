import { In, type DataSource, type EntityManager } from 'typeorm';
import { StoredFile } from '../entities/index.js';
import { sql } from '../sql.js';
import { namedByPrefix } from './columns.js';
import { keysetEntities, type KeysetBounds } from './paging.js';

/**
 * Metadata of stored files (the bytes are on disk, src/domain/files.ts): through TypeORM's entity (its columns
 * are the list); the completion of a file id by name is one prepared statement.
 */
export async function filesPage(m: EntityManager, roomId: string, bounds: KeysetBounds): Promise<StoredFile[]> {
  const qb = m.getRepository(StoredFile).createQueryBuilder('x').where('x.roomId = :roomId', { roomId });
  return keysetEntities(qb, 'x.id', bounds);
}

export async function fileById(m: EntityManager, roomId: string, id: string): Promise<StoredFile | null> {
  return m.findOneBy(StoredFile, { id, roomId });
}

export async function insertFile(m: EntityManager, file: StoredFile): Promise<StoredFile> {
  const row = m.create(StoredFile, file);
  await m.insert(StoredFile, row);
  return row;
}

/** Storage keys read in one statement at most. */
const KEYS_PER_QUERY = 500;

/** Those of `keys` that some file row names as its storage key. */
export async function namedStorageKeys(m: EntityManager, keys: string[]): Promise<Set<string>> {
  const named = new Set<string>();
  for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
    const rows = await m.find(StoredFile, {
      where: { storageKey: In(keys.slice(i, i + KEYS_PER_QUERY)) },
      select: { storageKey: true },
    });
    for (const r of rows) named.add(r.storageKey);
  }
  return named;
}

/** The room's files whose name (case-insensitive) or id starts with `prefix`, by name, at most `limit`. */
export async function filesByPrefix(
  m: EntityManager,
  roomId: string,
  prefix: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  return namedByPrefix(m, 'files', 'filename', roomId, prefix, limit);
}

const FILE_IN_ROOM = 'SELECT 1 FROM "files" WHERE "id" = ? AND "roomId" = ?';

export async function fileInRoom(db: DataSource | EntityManager, roomId: string, id: string): Promise<boolean> {
  return (await sql(db, FILE_IN_ROOM, [id, roomId])).rows.length > 0;
}
