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
 * must set `SVC_WEBHOOK_KEY` (docs/configuration.md#secrets).
 */
export function loadWebhookKey(config: Pick<Config, 'webhookKey' | 'dataDir'>): Buffer {
  if (config.webhookKey) return config.webhookKey;
  const file = path.join(config.dataDir, 'webhook.key');
  const cached = keyCache.get(file);
  if (cached) return cached;
  if (!fs.existsSync(file)) publishNewKey(config.dataDir, file);
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  keyCache.set(file, key);
  return key;
}

/**
 * Writes a fresh key to a private temporary file, then hard-links it to `file`. The link appears with its whole
 * content or not at all, and fails with EEXIST when another process (a second server, the worker, the CLI
 * starting at the same moment) published first: then that process's key is the one everybody reads.
 * Creating `file` itself with `wx` and writing into it would let a concurrent reader see it still empty.
 */
function publishNewKey(dataDir: string, file: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${randomBytes(32).toString('base64')}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Encrypts with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` (base64url), a fresh 96-bit IV each time. */
export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
    '.',
  );
}

/** Decrypts `encryptSecret`'s output; throws when the key is wrong or the value was altered. */
export function decryptSecret(key: Buffer, sealed: string): string {
  const [format, iv, tag, ct, extra] = sealed.split('.');
  if (format !== FORMAT || !iv || !tag || ct === undefined || extra !== undefined)
    throw new Error('not a sealed webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
