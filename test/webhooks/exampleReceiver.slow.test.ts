import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { addWebhook, deliveryRows } from './helpers.js';
import { freePort, waitFor } from './processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('examples/webhook-receiver.ts', () => {
  it('accepts a real signed delivery once and rejects a forged one', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const port = await freePort();
    const hook = await addWebhook(t.rt, w.roomId, `http://127.0.0.1:${port}/hook`);
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/webhook-receiver.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), WEBHOOK_SECRETS: `whsec_old,${hook.secret}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      await waitFor(() => out.includes('listening'), 'the example receiver to listen');
      const rec = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
        key: w.key,
        body: { title: 'Hello receiver' },
      });
      await createWebhookWorker({ services: t.rt.services }).runOnce();
      const [row] = await deliveryRows(t.rt, hook.id);
      expect(row).toMatchObject({ state: 'succeeded', statusCode: 204 });
      await waitFor(() => out.includes('"received"'), 'the receiver to log the event');
      const logged = JSON.parse(out.split('\n').find((l) => l.includes('"received"'))!);
      expect(logged.event).toMatchObject({
        type: 'record.created',
        data: { object: { id: rec.body.id, type: 'record' } },
      });

      const forged = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'svc-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'svc-webhook-signature': `v1=${'0'.repeat(64)}`,
          'svc-webhook-id': 'evt_forgedforgedforgedfo',
        },
        body: JSON.stringify(logged.event),
      });
      expect(forged.status).toBe(401);
      expect(await forged.json()).toEqual({ error: 'signature_mismatch' });

      const again = await call(t, 'POST', `/v1/rooms/${w.roomId}/webhooks/${hook.id}/deliveries/${row.id}/redeliver`, {
        key: w.key,
      });
      expect(again.body.delivery).toMatchObject({ success: true, statusCode: 200 });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
