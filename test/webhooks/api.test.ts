import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey } from '../helpers/harness.js';
import { connectMcp } from '../mcp/mcpClient.js';
import { catalogEntries, listProcedures } from '../../src/procedures/index.js';
import { setWebhookActive } from '../../src/webhooks/webhookConfig.js';
import { WebhookDelivery } from '../../db/entities/index.js';
import { addWebhook, deliveryRows, testClock, startWebhookWorld } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function setup() {
  const clock = testClock('2026-06-10T12:00:00.000Z');
  const world = await startWebhookWorld({ clock });
  const hook = await addWebhook(world.t.rt, world.w.roomId, world.rx.url, {
    headers: [['Authorization', 'Bearer receiver-credential']],
  });
  return { ...world, clock, hook, base: `/v1/rooms/${world.w.roomId}/webhooks/${hook.id}` };
}

describe('webhooks on /v1', () => {
  it("lists a room's webhooks without secrets or header values", async () => {
    await using s = await setup();
    const r = await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: s.w.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      data: [
        {
          id: s.hook.id,
          roomId: s.w.roomId,
          url: s.rx.url,
          apiVersion: '2026-06-09',
          active: true,
          customHeaders: ['Authorization'],
          rotating: false,
          rotationEndsAt: null,
          eventTypes: [],
          maxDeliveriesPerSecond: null,
          createdAt: '2026-06-10T12:00:00.000Z',
          updatedAt: '2026-06-10T12:00:00.000Z',
        },
      ],
      nextCursor: null,
    });
    expect(JSON.stringify(r.body)).not.toContain('receiver-credential');
  });

  it('serves the event catalog (every declared type, room.created the only preview) and the event log a receiver catches up from', async () => {
    await using s = await setup();
    const types = await call(s.t, 'GET', '/v1/event-types', { key: s.w.key });
    expect(types.body.data).toHaveLength(catalogEntries().length);
    expect(types.body.data.filter((e: any) => !e.stable).map((e: any) => e.type)).toEqual(['room.created']);
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const log = await call(s.t, 'GET', `/v1/events?roomId=${s.w.roomId}`, { key: s.w.key });
    expect(log.body.data.map((e: any) => e.id)).toContain(s.rx.requests[0].headers['svc-webhook-id']);
  });

  it('pages the delivery history newest first with limit and cursor', async () => {
    await using s = await setup();
    for (const title of ['a', 'b', 'c']) {
      await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title } });
      s.clock.advance(1000);
    }
    await s.worker.runOnce();
    const first = await call(s.t, 'GET', `${s.base}/deliveries?limit=2`, { key: s.w.key });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const second = await call(
      s.t,
      'GET',
      `${s.base}/deliveries?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { key: s.w.key },
    );
    expect(second.body.data).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const all = [...first.body.data, ...second.body.data];
    const rows = await deliveryRows(s.t.rt, s.hook.id);
    expect(all.map((d: any) => d.id)).toEqual(rows.map((r) => r.id).reverse());
    for (const d of all) {
      expect(d).toMatchObject({ success: true, statusCode: 200, attempts: 1, eventType: 'record.created' });
      expect(d.deliveryId).toMatch(UUID);
      expect(typeof d.durationMs).toBe('number');
    }
    const bad = await call(s.t, 'GET', `${s.base}/deliveries?cursor=forged`, { key: s.w.key });
    expect(bad.status).toBe(400);
  });

  it('redelivers once with the same event id and a new deliveryId; an HTTP failure is 200 with success=false', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [orig] = (await call(s.t, 'GET', `${s.base}/deliveries`, { key: s.w.key })).body.data;
    s.rx.script.push({ status: 500 });
    s.clock.advance(60_000);
    const r = await call(s.t, 'POST', `${s.base}/deliveries/${orig.id}/redeliver`, { key: s.w.key });
    expect(r.status).toBe(200);
    expect(r.body.delivery).toMatchObject({
      success: false,
      statusCode: 500,
      attempts: 1,
      eventId: orig.eventId,
      finalizedAt: '2026-06-10T12:01:00.000Z',
    });
    expect(r.body.delivery.id).not.toBe(orig.id);
    expect(r.body.delivery.deliveryId).not.toBe(orig.deliveryId);
    const [a, b] = s.rx.requests;
    expect(b.headers['svc-webhook-id']).toBe(a.headers['svc-webhook-id']);
    expect(b.headers['svc-webhook-delivery']).toBe(r.body.delivery.deliveryId);
    expect(b.body.equals(a.body)).toBe(true);
    expect(Number(b.headers['svc-webhook-timestamp']) - Number(a.headers['svc-webhook-timestamp'])).toBe(60);
    // sent once: no automatic retry of a redelivery
    s.clock.advance(3_600_000);
    expect(await s.worker.runOnce()).toBe(0);
    expect(s.rx.requests).toHaveLength(2);
    const ok = await call(s.t, 'POST', `${s.base}/deliveries/${r.body.delivery.id}/redeliver`, { key: s.w.key });
    expect(ok.body.delivery).toMatchObject({ success: true, statusCode: 200, eventId: orig.eventId });
  });

  it('redeliver answers 404 for an unknown delivery or webhook, 409 for an inactive one, 422 for an unreadable snapshot', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [orig] = await deliveryRows(s.t.rt, s.hook.id);
    const redeliver = (id: string, base = s.base, key = s.w.key) =>
      call(s.t, 'POST', `${base}/deliveries/${id}/redeliver`, { key });

    const missing = await redeliver('whd_01KAR3V6X5Q2Z8N4M7P9W1T3YB');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expect(missing.body.error.requestId).toBe(missing.headers.get('x-request-id'));
    expect((await redeliver(orig.id, `/v1/rooms/${s.w.roomId}/webhooks/wh_01KAR3V6X5Q2Z8N4M7P9W1T3YB`)).status).toBe(
      404,
    );
    const other = await addWebhook(s.t.rt, s.w.roomId, s.rx.url);
    expect((await redeliver(orig.id, `/v1/rooms/${s.w.roomId}/webhooks/${other.id}`)).body.error.code).toBe(
      'not_found',
    );
    expect((await redeliver(orig.id, `/v1/rooms/${s.w.dmRoomId}/webhooks/${s.hook.id}`)).body.error.code).toBe(
      'room_not_found',
    );

    await setWebhookActive(s.t.rt.services, s.hook.id, false);
    const inactive = await redeliver(orig.id);
    expect(inactive.status).toBe(409);
    expect(inactive.body.error.code).toBe('webhook_inactive');
    await setWebhookActive(s.t.rt.services, s.hook.id, true);

    for (const payload of ['{not json', '{}', JSON.stringify({ id: 'evt_short', type: 'record.created' })]) {
      await s.t.rt.ds.getRepository(WebhookDelivery).update({ id: orig.id }, { payload });
      const bad = await redeliver(orig.id);
      expect(bad.status).toBe(422);
      expect(bad.body.error.code).toBe('validation_error');
    }
    expect(s.rx.requests).toHaveLength(1);
  });

  it('needs webhooks:read / webhooks:write and room manage access; other organizations see 404', async () => {
    await using s = await setup();
    await call(s.t, 'POST', `/v1/rooms/${s.w.roomId}/records`, { key: s.w.key, body: { title: 'R' } });
    await s.worker.runOnce();
    const [orig] = await deliveryRows(s.t.rt, s.hook.id);
    const readOnly = await issueKey(s.t.rt, {
      userId: s.w.owner.id,
      organizationId: s.w.orgId,
      scopes: ['webhooks:read'],
    });
    expect((await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: readOnly.token })).status).toBe(200);
    const denied = await call(s.t, 'POST', `${s.base}/deliveries/${orig.id}/redeliver`, { key: readOnly.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({
      code: 'insufficient_scope',
      details: { required: ['webhooks:write'], granted: ['webhooks:read'] },
    });

    const member = await issueKey(s.t.rt, {
      userId: s.w.member.id,
      organizationId: s.w.orgId,
      scopes: ['webhooks:read', 'webhooks:write'],
    });
    expect((await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: member.token })).body.error.code).toBe(
      'forbidden',
    );
    expect((await call(s.t, 'POST', `${s.base}/deliveries/${orig.id}/redeliver`, { key: member.token })).status).toBe(
      403,
    );

    const stranger = await createWorld(s.t.rt, 'Other');
    expect((await call(s.t, 'GET', `/v1/rooms/${s.w.roomId}/webhooks`, { key: stranger.key })).status).toBe(404);
    expect((await call(s.t, 'GET', `${s.base}/deliveries`, { key: stranger.key })).status).toBe(404);
    expect((await call(s.t, 'POST', `${s.base}/deliveries/${orig.id}/redeliver`, { key: stranger.key })).status).toBe(
      404,
    );
    expect(s.rx.requests).toHaveLength(1);
  });

  it('is the same operation over MCP: events of MCP writes are delivered, and the five tools exist', async () => {
    await using s = await setup();
    const tools = listProcedures()
      .filter((p) => p.meta.tags.includes('webhooks'))
      .map((p) => p.meta.tool.name);
    expect(tools).toEqual([
      'list_webhooks',
      'list_webhook_deliveries',
      'redeliver_webhook_delivery',
      'test_webhook',
      'recover_webhook_deliveries',
    ]);
    await using c = await connectMcp(s.t, { token: s.w.key });
    const rec = await c.callTool({ name: 'create_record', arguments: { roomId: s.w.roomId, title: 'Via MCP' } });
    expect(rec.isError).toBeFalsy();
    await s.worker.runOnce();
    const body = JSON.parse(s.rx.requests[0].body.toString());
    expect(body).toMatchObject({
      type: 'record.created',
      data: { object: { id: (rec.structuredContent as any).id, type: 'record' } },
    });
    const list = await c.callTool({
      name: 'list_webhook_deliveries',
      arguments: { roomId: s.w.roomId, webhookId: s.hook.id },
    });
    const [d] = (list.structuredContent as any).data;
    const again = await c.callTool({
      name: 'redeliver_webhook_delivery',
      arguments: { roomId: s.w.roomId, webhookId: s.hook.id, deliveryId: d.id },
    });
    expect(again.isError).toBeFalsy();
    expect((again.structuredContent as any).delivery).toMatchObject({ success: true, eventId: d.eventId });
    expect(s.rx.requests[1].headers['svc-webhook-id']).toBe(s.rx.requests[0].headers['svc-webhook-id']);
  });
});
