import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/** Prefix of webhook signing secrets (`whsec_` + 32 random bytes, base64url). */
export const SECRET_PREFIX = 'whsec_';
const FORMAT = 'v1';
const keyCache = new Map<string, Buffer>();

/** A new webhook signing secret: 256 random bits. The HMAC key is the whole string's UTF-8 bytes. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64url');

/**
 * The AES-256-GCM key that protects webhook secrets at rest: `SVC_WEBHOOK_KEY` when set, otherwise a key
 * generated once into `<dataDir>/webhook.key` (mode 0600) and read from there afterwards, so the server,
 * the worker and the CLI on the same data directory agree. Several hosts sharing a PostgreSQL database
 * must set `SVC_WEBHOOK_KEY` (README "Webhooks").
 */
export function loadWebhookKey(config: Pick<Config, 'webhookKey' | 'dataDir'>): Buffer {
  if (config.webhookKey) return config.webhookKey;
  const file = path.join(config.dataDir, 'webhook.key');
  const cached = keyCache.get(file);
  if (cached) return cached;
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  keyCache.set(file, key);
  return key;
}

/** Encrypts with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` (base64url), a fresh 96-bit IV each time. */
export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** Decrypts `encryptSecret`'s output; throws when the key is wrong or the value was altered. */
export function decryptSecret(key: Buffer, sealed: string): string {
  const [format, iv, tag, ct, extra] = sealed.split('.');
  if (format !== FORMAT || !iv || !tag || ct === undefined || extra !== undefined) throw new Error('not a sealed webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
