import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Setting } from '../db/entities/index.js';

/**
 * The server secret (signs cursors and session cookies): SVC_SECRET when set, else one generated once and
 * kept in the database, so every process on the same database agrees and restarts keep sessions valid.
 */
export async function loadServerSecret(ds: DataSource, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const repo = ds.getRepository(Setting);
  const existing = await repo.findOneBy({ key: 'server_secret' });
  if (existing) return existing.value;
  await repo
    .createQueryBuilder()
    .insert()
    .values({ key: 'server_secret', value: randomBytes(32).toString('base64url') })
    .orIgnore()
    .execute();
  return (await repo.findOneByOrFail({ key: 'server_secret' })).value;
}
