import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { settingValue, settingValueOrInsert } from '../db/stores/settings.js';

/**
 * The server secret (signs cursors and session cookies): SVC_SECRET when set, else one generated once and
 * kept in the database, so every process on the same database agrees and restarts keep sessions valid.
 */
export async function loadServerSecret(ds: DataSource, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const existing = await settingValue(ds, 'server_secret');
  if (existing !== undefined) return existing;
  return settingValueOrInsert(ds, 'server_secret', randomBytes(32).toString('base64url'));
}
