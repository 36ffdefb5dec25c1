import type { DataSource } from 'typeorm';
import { Setting } from '../entities/index.js';

// Server-wide settings (`settings`), a key and a value each, through TypeORM's repository.

export const settingValue = async (ds: DataSource, key: string): Promise<string | undefined> =>
  (await ds.getRepository(Setting).findOneBy({ key }))?.value;

/** Stores `value` under `key` unless the key has one; returns the value the key holds afterwards. */
export async function settingValueOrInsert(ds: DataSource, key: string, value: string): Promise<string> {
  const repo = ds.getRepository(Setting);
  await repo.createQueryBuilder().insert().values({ key, value }).orIgnore().execute();
  return (await repo.findOneByOrFail({ key })).value;
}
