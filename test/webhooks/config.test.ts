import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { loadConfig } from '../../src/config.js';
import { protectedHeaderReason, validateCustomHeaders } from '../../src/webhooks/customHeaders.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { decryptSecret, encryptSecret } from '../../src/webhooks/secretBox.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { emitEvent } from '../../src/domain/events.js';
import { inTransaction } from '../../db/transaction.js';
import { Room, Webhook } from '../../db/entities/index.js';
import { deliveryRows, startReceiver } from './helpers.js';

describe('webhook configuration', () => {
  it('refuses custom headers that would forge or break a delivery; allows Content-Type, User-Agent and others', () => {
    for (const name of [
      'Svc-Webhook-Signature',
      'svc-webhook-id',
      'SVC-WEBHOOK-TIMESTAMP',
      'Svc-Webhook-Anything',
      'X-Webhook-Signature',
      'x-webhook-event',
      'X-Webhook-Delivery-Id',
      'Sunset',
      'deprecation',
      'Host',
      'Content-Length',
      'Transfer-Encoding',
      'Connection',
      'Proxy-Authorization',
    ]) {
      expect(protectedHeaderReason(name), name).not.toBeNull();
      expect(() => validateCustomHeaders([[name, 'x']]), name).toThrow(/not allowed/);
    }
    expect(
      validateCustomHeaders([
        ['Content-Type', 'application/cloudevents+json'],
        ['User-Agent', 'A/1'],
        ['Authorization', 'Bearer x'],
      ]),
    ).toHaveLength(3);
    expect(() => validateCustomHeaders([['Bad Name', 'x']])).toThrow(/Invalid header name/);
    expect(() => validateCustomHeaders([['X-A', 'line\r\nInjected: 1']])).toThrow(/Invalid value/);
    expect(() =>
      validateCustomHeaders([
        ['X-A', '1'],
        ['x-a', '2'],
      ]),
    ).toThrow(/twice/);
  });

  it('refuses an unknown apiVersion and defaults new webhooks to 2026-06-09', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await expect(
      createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/h', apiVersion: '2027-01-01' }),
    ).rejects.toMatchObject({ code: 'validation_error' });
    const { webhook } = await createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/h' });
    expect(webhook.apiVersion).toBe('2026-06-09');
    await expect(
      createWebhook(t.rt.services, { roomId: w.dmRoomId, url: 'http://127.0.0.1:9/h' }),
    ).rejects.toMatchObject({ code: 'room_not_found' });
  });

  it('encrypts secrets with AES-256-GCM under a key file made once in the data directory (mode 0600)', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { webhook, secret } = await createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/h' });
    const file = path.join(t.dataDir, 'webhook.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    expect(key).toHaveLength(32);
    const stored = await t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: webhook.id });
    expect(stored.secretEnc).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(stored.secretEnc).not.toContain(secret);
    expect(decryptSecret(key, stored.secretEnc)).toBe(secret);
    const [v, iv, tag, ct] = stored.secretEnc.split('.');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() => decryptSecret(key, [v, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    expect(encryptSecret(key, 'same')).not.toBe(encryptSecret(key, 'same'));
  });

  it('uses SVC_WEBHOOK_KEY when set, and a delivery under the wrong key fails closed without sending', async () => {
    const k = randomBytes(32).toString('base64');
    expect(() => loadConfig({ SVC_WEBHOOK_KEY: 'c2hvcnQ=' })).toThrow(/SVC_WEBHOOK_KEY must be 32 bytes/);
    await using t = await startTestServer({ env: { SVC_WEBHOOK_KEY: k } });
    await using rx = await startReceiver();
    const w = await createWorld(t.rt);
    const { webhook, secret } = await createWebhook(t.rt.services, { roomId: w.roomId, url: rx.url });
    expect(fs.existsSync(path.join(t.dataDir, 'webhook.key'))).toBe(false);
    const stored = await t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: webhook.id });
    expect(decryptSecret(Buffer.from(k, 'base64'), stored.secretEnc)).toBe(secret);
    // the operator replaced the key: secrets cannot be read, nothing unsigned is ever sent
    t.rt.services.config.webhookKey = randomBytes(32);
    await inTransaction(t.rt.services, async (m) => {
      const room = await m.findOneByOrFail(Room, { id: w.roomId });
      await emitEvent(m, {
        type: 'message.created',
        room,
        object: { type: 'message', id: 'msg_1' },
        actor: { kind: 'app', userId: w.owner.id } as never,
        now: new Date(),
      });
    });
    await createWebhookWorker({ services: t.rt.services }).runOnce();
    expect(rx.requests).toHaveLength(0);
    expect((await deliveryRows(t.rt, webhook.id))[0]).toMatchObject({
      state: 'failed',
      lastError: 'secret_unreadable',
    });
  });
});
