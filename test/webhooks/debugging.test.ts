import { describe, expect, it } from 'vitest';
import { WebhookAttempt, Webhook } from '../../db/entities/index.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { connectMcp } from '../mcp/mcpClient.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import { purgeWebhookAttempts } from '../../src/webhooks/attemptLog.js';
import { setWebhookActive } from '../../src/webhooks/webhookConfig.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { addWebhook, deliveryRows, startReceiver, testClock } from './helpers.js';
import { freePort } from './processes.js';

// Test events, every attempt on record, redeliver by either id, disable after sustained failure.

async function setup(o: { env?: Record<string, string>; script?: Parameters<typeof startReceiver>[0] } = {}) {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const t = await startTestServer({ now: clock.now, env: { SVC_WEBHOOK_BACKOFF_BASE_MS: '1000', ...o.env } });
  const w = await createWorld(t.rt);
  const rx = await startReceiver(o.script ?? []);
  const hook = await addWebhook(t.rt, w.roomId, rx.url, { headers: [['Authorization', 'Bearer receiver-credential']] });
  const worker = createWebhookWorker({ services: t.rt.services });
  const base = `/v1/rooms/${w.roomId}/webhooks/${hook.id}`;
  const close = async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  };
  return { clock, t, w, rx, hook, worker, base, [Symbol.asyncDispose]: close };
}

const attemptsOf = (t: { rt: { ds: any } }, deliveryRowId: string): Promise<WebhookAttempt[]> =>
  t.rt.ds.getRepository(WebhookAttempt).find({ where: { deliveryRowId }, order: { id: 'ASC' } });

describe('test events', () => {
  it('sends a signed webhook.test delivery through the real sender, marked as a test, and answers with the outcome', async () => {
    await using s = await setup({ script: [{ status: 204 }] });
    const r = await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toMatchObject({ success: true, statusCode: 204, errorClass: null });
    expect(typeof r.body.outcome.durationMs).toBe('number');
    expect(r.body.delivery).toMatchObject({ success: true, statusCode: 204, eventType: 'webhook.test', attempts: 1 });
    expect(r.body.delivery.id).toMatch(/^whd_/);

    expect(s.rx.requests).toHaveLength(1);
    const req = s.rx.requests[0];
    expect(req.headers['svc-webhook-test']).toBe('true');
    expect(req.headers['svc-webhook-type']).toBe('webhook.test');
    expect(req.headers['svc-webhook-delivery']).toBe(r.body.delivery.deliveryId);
    expect(req.headers.authorization).toBe('Bearer receiver-credential');
    const verdict = verifyWebhook({
      rawBody: req.body,
      headers: req.headers,
      secrets: [s.hook.secret],
      now: s.clock.now,
    });
    expect(verdict.ok).toBe(true);
    const body = JSON.parse(req.body.toString());
    expect(body).toMatchObject({
      type: 'webhook.test',
      test: true,
      apiVersion: '2026-06-09',
      roomId: s.w.roomId,
      organizationId: s.w.orgId,
      data: { object: { type: 'webhook', id: s.hook.id } },
    });
    expect(body.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    // it is in the history like any delivery
    const list = await call(s.t, 'GET', `${s.base}/deliveries`, { key: s.w.key });
    expect(list.body.data[0]).toMatchObject({ id: r.body.delivery.id, eventType: 'webhook.test', success: true });
  });

  it('reports a receiver that is down as success=false with its error class, at once', async () => {
    await using s = await setup();
    const port = await freePort();
    const down = await addWebhook(s.t.rt, s.w.roomId, `http://127.0.0.1:${port}/hook`);
    const r = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/webhooks/${down.id}/test`, { key: s.w.key });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toMatchObject({ success: false, statusCode: null, errorClass: 'connection_refused' });
    expect(r.body.delivery).toMatchObject({ success: false, attempts: 1 });
    expect(r.body.delivery.finalizedAt).not.toBeNull();
  });

  it('answers 409 webhook_inactive for an inactive webhook, sending nothing and storing nothing', async () => {
    await using s = await setup();
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    const r = await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'webhook_inactive' });
    expect(typeof r.body.error.requestId).toBe('string');
    expect(s.rx.requests).toHaveLength(0);
    expect(await deliveryRows(s.t.rt, s.hook.id)).toHaveLength(0);
  });

  it('needs webhooks:write and room manage access; unknown webhooks are 404', async () => {
    await using s = await setup();
    const { issueKey } = await import('../helpers/harness.js');
    const reader = await issueKey(s.t.rt, {
      userId: s.w.owner.id,
      organizationId: s.w.orgId,
      scopes: ['webhooks:read'],
    });
    expect((await call(s.t, 'POST', `${s.base}/test`, { key: reader.token })).body.error.code).toBe(
      'insufficient_scope',
    );
    const member = await issueKey(s.t.rt, {
      userId: s.w.member.id,
      organizationId: s.w.orgId,
      scopes: ['webhooks:write'],
    });
    expect((await call(s.t, 'POST', `${s.base}/test`, { key: member.token })).status).toBe(403);
    const missing = await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/webhooks/wh_01KAR3V6X5Q2Z8N4M7P9W1T3YB/test`, {
      key: s.w.key,
    });
    expect(missing.status).toBe(404);
    expect(s.rx.requests).toHaveLength(0);
  });

  it('is the MCP tool test_webhook too', async () => {
    await using s = await setup();
    await using c = await connectMcp(s.t, { token: s.w.key });
    const r = await c.callTool({ name: 'test_webhook', arguments: { roomId: s.w.roomId, webhookId: s.hook.id } });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as any).outcome).toMatchObject({ success: true, statusCode: 200 });
    expect(s.rx.requests[0].headers['svc-webhook-test']).toBe('true');
  });
});

describe('every attempt on record', () => {
  it('keeps one row per automatic attempt and per redelivery, with the exact request and the response, custom header values hidden', async () => {
    await using s = await setup({
      script: [
        { status: 503, body: 'down for maintenance', headers: { 'retry-after': '1', 'content-type': 'text/plain' } },
        { status: 200, body: 'x'.repeat(5000) },
      ],
    });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    s.clock.advance(1000);
    await s.worker.runOnce();
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    expect(row).toMatchObject({ state: 'succeeded', attempts: 2 });
    const attempts = await attemptsOf(s.t, row.id);
    expect(attempts.map((a) => [a.attemptNumber, a.kind, a.statusCode, a.errorClass])).toEqual([
      [1, 'automatic', 503, null],
      [2, 'automatic', 200, null],
    ]);
    expect(attempts[0].startedAt).toBe('2026-06-10T12:00:00.000Z');
    expect(attempts[1].startedAt).toBe('2026-06-10T12:00:01.000Z');
    expect(attempts[0].responseBody).toBe('down for maintenance');
    expect(JSON.parse(attempts[0].responseHeaders!)).toMatchObject({
      'retry-after': '1',
      'content-type': 'text/plain',
    });
    expect(attempts[1].responseBody).toHaveLength(2048);
    for (const [i, a] of attempts.entries()) {
      const sent = s.rx.requests[i];
      const headers = JSON.parse(a.requestHeaders!);
      // exactly what went out: signature, timestamp and body as the receiver got them
      expect(headers['Svc-Webhook-Signature']).toBe(sent.headers['svc-webhook-signature']);
      expect(headers['Svc-Webhook-Timestamp']).toBe(sent.headers['svc-webhook-timestamp']);
      expect(a.requestBody).toBe(sent.body.toString());
      expect(a.requestUrl).toBe(s.rx.url);
      expect(headers.Authorization).toBe('(custom header value hidden)');
      expect(JSON.stringify(a)).not.toContain('receiver-credential');
      expect(JSON.stringify(a)).not.toContain(s.hook.secret);
    }
    // a redelivery is its own row with its own attempt
    const again = await call(s.t, 'POST', `${s.base}/deliveries/${row.id}/redeliver`, { key: s.w.key });
    const redone = await attemptsOf(s.t, again.body.delivery.id);
    expect(redone.map((a) => [a.attemptNumber, a.kind, a.statusCode])).toEqual([[1, 'redelivery', 200]]);
    // the public API never shows a receiver's response body, its headers or the attempts
    const list = await call(s.t, 'GET', `${s.base}/deliveries`, { key: s.w.key });
    expect(JSON.stringify(list.body)).not.toContain('down for maintenance');
    expect(Object.keys(list.body.data[0]).sort()).toEqual([
      'attempts',
      'deliveryId',
      'durationMs',
      'eventId',
      'eventType',
      'finalizedAt',
      'id',
      'statusCode',
      'success',
    ]);
  });

  it('names the error class of attempts that got no usable answer: connection refused, SSRF refused, redirect not followed, timeout', async () => {
    await using s = await setup({ script: [{ status: 302, headers: { location: 'http://127.0.0.1:1/' } }, 'hang'] });
    const port = await freePort();
    const refused = await addWebhook(s.t.rt, s.w.roomId, `http://127.0.0.1:${port}/hook`);
    // allowed at creation by the test allow-list, refused at the attempt by a server without it
    const { configureWebhookDelivery } = await import('../../src/webhooks/deliveryDeps.js');
    configureWebhookDelivery(s.t.rt.services, { timeouts: { connectMs: 2000, responseMs: 1500 } });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const classes = async (id: string) =>
      (await Promise.all((await deliveryRows(s.t.rt, id)).map((r) => attemptsOf(s.t, r.id))))
        .flat()
        .map((a) => a.errorClass);
    expect(await classes(refused.id)).toEqual(['connection_refused']);
    expect(await classes(s.hook.id)).toEqual(['redirect_not_followed']);
    const t2 = await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key });
    expect(t2.body.outcome).toMatchObject({ success: false, errorClass: 'timeout', statusCode: null });

    await using strict = await startTestServer({ env: { SVC_SSRF_ALLOWLIST: '' } });
    const w2 = await createWorld(strict.rt);
    const { Webhook: WebhookEntity } = await import('../../db/entities/index.js');
    const blocked = await addWebhook(strict.rt, w2.roomId, 'https://hooks.example.com/in');
    await strict.rt.ds.getRepository(WebhookEntity).update({ id: blocked.id }, { url: 'http://10.0.0.7/hook' });
    const r = await call(strict, 'POST', `/v1/rooms/${w2.roomId}/webhooks/${blocked.id}/test`, { key: w2.key });
    expect(r.body.outcome).toMatchObject({
      success: false,
      errorClass: 'ssrf_refused',
      statusCode: null,
      durationMs: null,
    });
    const rows = await deliveryRows(strict.rt, blocked.id);
    const [a] = await attemptsOf(strict, rows[0].id);
    expect(a).toMatchObject({ errorClass: 'ssrf_refused', requestHeaders: null, requestBody: null });
  });

  it('purges attempt records past the retention period (default 30 days, configurable)', async () => {
    await using s = await setup({ env: { SVC_WEBHOOK_ATTEMPT_RETENTION_DAYS: '10' } });
    await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key });
    s.clock.advance(5 * 86_400_000);
    await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key });
    const count = () => s.t.rt.ds.getRepository(WebhookAttempt).count({ where: { webhookId: s.hook.id } });
    expect(await count()).toBe(2);
    s.clock.advance(6 * 86_400_000);
    expect(await purgeWebhookAttempts(s.t.rt.services)).toBe(1);
    expect(await count()).toBe(1);
    expect(await purgeWebhookAttempts(s.t.rt.services, new Date('2030-01-01T00:00:00Z'))).toBe(1);
    expect(await count()).toBe(0);
    // the history rows stay; only the attempt records go
    expect(await deliveryRows(s.t.rt, s.hook.id)).toHaveLength(2);
  });
});

describe('redeliver by either id', () => {
  it('takes the history row id; the Svc-Webhook-Delivery UUID gets a 404 saying which id the path takes', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [row] = await deliveryRows(s.t.rt, s.hook.id);
    const byUuid = await call(s.t, 'POST', `${s.base}/deliveries/${row.deliveryId}/redeliver`, { key: s.w.key });
    expect(byUuid.status).toBe(404);
    expect(byUuid.body.error.code).toBe('not_found');
    expect(byUuid.body.error.message).toMatch(/history row id \(whd_…/);
    expect(byUuid.body.error.message).toContain(row.id);
    expect(byUuid.body.error.details).toMatchObject({ reason: 'delivery_uuid_given', historyId: row.id });
    const unknownUuid = await call(s.t, 'POST', `${s.base}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, {
      key: s.w.key,
    });
    expect(unknownUuid.status).toBe(404);
    expect(unknownUuid.body.error.message).toMatch(/not the Svc-Webhook-Delivery UUID/);
    expect(unknownUuid.body.error.details.historyId).toBeUndefined();
    expect(s.rx.requests).toHaveLength(1);
    expect(await deliveryRows(s.t.rt, s.hook.id)).toHaveLength(1);
    const byId = await call(s.t, 'POST', `${s.base}/deliveries/${row.id}/redeliver`, { key: s.w.key });
    expect(byId.status).toBe(200);
    expect(byId.body.delivery.success).toBe(true);
    // anything else is still a 400
    expect((await call(s.t, 'POST', `${s.base}/deliveries/nonsense/redeliver`, { key: s.w.key })).status).toBe(400);
  });

  it("does not reveal the history id of another webhook's delivery", async () => {
    await using s = await setup();
    const other = await addWebhook(s.t.rt, s.w.roomId, s.rx.url);
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [theirs] = await deliveryRows(s.t.rt, other.id);
    const r = await call(s.t, 'POST', `${s.base}/deliveries/${theirs.deliveryId}/redeliver`, { key: s.w.key });
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).not.toContain(theirs.id);
  });
});

describe('disabled after sustained failure', () => {
  it('sets a webhook inactive once every attempt has failed for the period, with its reason; a success resets the streak; activating clears it', async () => {
    await using s = await setup({ env: { SVC_WEBHOOK_DISABLE_AFTER_HOURS: '72' } });
    const fail = () => s.rx.script.push({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const hook = () => s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: s.hook.id });
    const event = async () => {
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
      for (let i = 0; i < 4; i++) {
        await s.worker.runOnce();
        s.clock.advance(10_000);
      }
    };
    fail();
    await event();
    expect(await hook()).toMatchObject({
      active: true,
      failingSince: '2026-06-10T12:00:00.000Z',
      disabledReason: null,
    });
    // 50 h later a success: the streak ends
    s.clock.advance(50 * 3_600_000);
    await event();
    expect((await hook()).failingSince).toBeNull();
    // failures again for 71 h: still active
    fail();
    await event();
    const start = (await hook()).failingSince!;
    s.clock.set(new Date(new Date(start).getTime() + 71 * 3_600_000).toISOString());
    fail();
    await event();
    expect(await hook()).toMatchObject({ active: true, disabledReason: null });
    // past 72 h of failures only: inactive, with the reason and the time
    s.clock.set(new Date(new Date(start).getTime() + 72 * 3_600_000 + 1).toISOString());
    const disabledAt = s.clock.now().toISOString();
    fail();
    await event();
    const off = await hook();
    expect(off.active).toBe(false);
    expect(off.disabledReason).toMatch(/failed for 3 days/);
    expect(off.disabledAt).toBe(disabledAt);
    const list = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: s.w.key });
    expect(list.body.data[0].active).toBe(false);
    // nothing more is sent; a test answers 409
    const sent = s.rx.requests.length;
    await event();
    expect(s.rx.requests.length).toBe(sent);
    expect((await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key })).status).toBe(409);
    // one click (activate) clears the reason and starts afresh
    s.rx.script.length = 0;
    await setWebhookActive(s.t.rt.services, s.hook.id, true);
    expect(await hook()).toMatchObject({ active: true, disabledReason: null, disabledAt: null, failingSince: null });
    expect((await call(s.t, 'POST', `${s.base}/test`, { key: s.w.key })).body.outcome.success).toBe(true);
  });

  it('does not count a webhook the owner deactivated as failing', async () => {
    await using s = await setup({ env: { SVC_WEBHOOK_DISABLE_AFTER_HOURS: '1' } });
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    await s.worker.runOnce();
    const w = await s.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: s.hook.id });
    expect(w).toMatchObject({ active: false, failingSince: null, disabledReason: null });
  });
});
