import { describe, expect, it } from 'vitest';
import { createSvcClient } from '../../clients/typescript/src/index.js';
import { sql } from '../../db/sql.js';
import type { Actor } from '../../src/domain/actor.js';
import { createMessage } from '../../src/domain/messages.js';
import { PINS_PER_ROOM } from '../../src/domain/pins.js';
import { createWebhookWorker } from '../../src/webhooks/deliveryWorker.js';
import {
  call,
  createRoom,
  createWorld,
  issueKey,
  startTestServer,
  type TestServer,
  type World,
} from '../helpers/harness.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { openListen } from '../mcp/listenStream.js';
import { bodyOf, connectMcp } from '../mcp/mcpClient.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';

// Pinned messages: pin_message, unpin_message and list_pinned_messages, one procedure each on REST, OpenAPI (the typed
// client) and MCP; the events they fire; who may pin; the room's limit.

const post = (t: TestServer, w: World, body = 'hello', roomId = w.roomId) =>
  call(t, 'POST', `/v1/rooms/${roomId}/messages`, { key: w.key, body: { body } });

/** The room's events of `type`, as the event log serves them. */
async function eventsOf(t: TestServer, w: World, type: string) {
  const r = await call(t, 'GET', `/v1/events?roomId=${w.roomId}&type=${type}`, { key: w.key });
  expect(r.status).toBe(200);
  return r.body.data as { type: string; actor: string; data: { object: { id: string } } }[];
}

/** Posts `n` messages in a room through the domain (a quick set-up), as `userId`; their ids in order. */
async function messages(t: TestServer, w: World, n: number, roomId = w.roomId, userId = w.owner.id) {
  const s = t.rt.services;
  const actor = { kind: 'app', userId, organizationId: w.orgId } as Actor;
  return s.ds.transaction(async (m) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await createMessage(m, s.now(), actor, roomId, `m${i}`)).id);
    return ids;
  });
}

const pinUrl = (roomId: string, messageId: string) => `/v1/rooms/${roomId}/messages/${messageId}/pin`;
const pinsOf = async (t: TestServer, w: World, roomId = w.roomId) =>
  (await call(t, 'GET', `/v1/rooms/${roomId}/pins`, { key: w.key })).body.data.map((p: { id: string }) => p.id);

/** A room of the world's organization made by `createdById` with these members. */
const roomOf = (t: TestServer, w: World, createdById: string, memberIds: string[] = []) =>
  t.rt.services.ds.transaction((m) =>
    createRoom(m, t.rt.services.now(), { name: 'Side', createdById, organizationId: w.orgId, memberIds }),
  );

describe('pinned messages over REST (the typed client)', () => {
  it('pins, lists with who pinned and when, unpins; again changes nothing and fires nothing', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { api, unwrap } = createSvcClient({ baseUrl: t.baseUrl, apiKey: w.key });
    const [first, second] = [(await post(t, w, 'first')).body.id, (await post(t, w, 'second')).body.id];
    const path = (messageId: string) => ({ params: { path: { roomId: w.roomId, messageId } } });

    const pin = await unwrap(api.POST('/v1/rooms/{roomId}/messages/{messageId}/pin', path(second)));
    expect(pin).toEqual({ messageId: second, pinnedById: w.owner.id, pinnedAt: expect.any(String) });
    await unwrap(api.POST('/v1/rooms/{roomId}/messages/{messageId}/pin', path(first)));
    // pinning a pinned message answers its pin, unchanged
    expect(await unwrap(api.POST('/v1/rooms/{roomId}/messages/{messageId}/pin', path(second)))).toEqual(pin);

    const list = await unwrap(api.GET('/v1/rooms/{roomId}/pins', { params: { path: { roomId: w.roomId } } }));
    // in pin order, each the message with its pin
    expect(list.data.map((p) => [p.id, p.body, p.pinnedById])).toEqual([
      [second, 'second', w.owner.id],
      [first, 'first', w.owner.id],
    ]);
    expect(list.data[0]).toMatchObject({
      roomId: w.roomId,
      authorId: w.owner.id,
      postedBy: 'app',
      pinnedAt: pin.pinnedAt,
    });
    expect(list.nextCursor).toBeNull();
    // a page of one, then the cursor
    const page = await unwrap(
      api.GET('/v1/rooms/{roomId}/pins', { params: { path: { roomId: w.roomId }, query: { limit: 1 } } }),
    );
    expect(page.data.map((p) => p.id)).toEqual([second]);
    const next = await unwrap(
      api.GET('/v1/rooms/{roomId}/pins', {
        params: { path: { roomId: w.roomId }, query: { limit: 1, cursor: page.nextCursor! } },
      }),
    );
    expect([next.data.map((p) => p.id), next.nextCursor]).toEqual([[first], null]);

    expect(await unwrap(api.DELETE('/v1/rooms/{roomId}/messages/{messageId}/pin', path(second)))).toEqual({
      messageId: second,
      pinned: false,
    });
    expect(await unwrap(api.DELETE('/v1/rooms/{roomId}/messages/{messageId}/pin', path(second)))).toEqual({
      messageId: second,
      pinned: false,
    });
    const after = await unwrap(api.GET('/v1/rooms/{roomId}/pins', { params: { path: { roomId: w.roomId } } }));
    expect(after.data.map((p) => p.id)).toEqual([first]);

    // one event per change: two pins, one unpin, with the message as the object and the person as the actor
    const pinned = await eventsOf(t, w, 'message.pinned');
    expect(pinned.map((e) => e.data.object.id)).toEqual([second, first]);
    expect(pinned[0].actor).toBe('app');
    expect((await eventsOf(t, w, 'message.unpinned')).map((e) => e.data.object.id)).toEqual([second]);
  });

  it('answers a repeated Idempotency-Key from the first answer, writing nothing more', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const id = (await post(t, w)).body.id;
    const once = { key: w.key, headers: { 'idempotency-key': 'pin-once' } };
    const a = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages/${id}/pin`, once);
    const b = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages/${id}/pin`, once);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await eventsOf(t, w, 'message.pinned')).toHaveLength(1);
    // a key is held per method and path: the same key unpins once, then replays that answer
    const c = await call(t, 'DELETE', `/v1/rooms/${w.roomId}/messages/${id}/pin`, once);
    const d = await call(t, 'DELETE', `/v1/rooms/${w.roomId}/messages/${id}/pin`, once);
    expect([c.status, d.status, d.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    expect(await eventsOf(t, w, 'message.unpinned')).toHaveLength(1);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/pins`, { key: w.key })).body.data).toEqual([]);
  });
});

describe('who may pin', () => {
  it('a member who may write in the room; not a key without messages:write, not a reader of the room, not elsewhere', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const [id] = await messages(t, w, 1);
    const refused = async (key: string, roomId: string, messageId: string, status: number, code: string) => {
      for (const method of ['POST', 'DELETE']) {
        const r = await call(t, method, pinUrl(roomId, messageId), { key });
        expect([method, r.status, r.body.error?.code]).toEqual([method, status, code]);
      }
    };
    const keyOf = async (userId: string, scopes: string[]) =>
      (await issueKey(t.rt, { userId, organizationId: w.orgId, scopes })).token;

    // a key that may only read messages
    await refused(await keyOf(w.owner.id, ['messages:read']), w.roomId, id, 403, 'insufficient_scope');
    // the organization's owner reads a room they are no member of, and may not write in it
    const membersOnly = await roomOf(t, w, w.member.id);
    const [inside] = await messages(t, w, 1, membersOnly.id, w.member.id);
    await refused(w.key, membersOnly.id, inside, 403, 'forbidden');
    expect((await call(t, 'GET', `/v1/rooms/${membersOnly.id}/pins`, { key: w.key })).status).toBe(200);
    // an organization member outside a room does not see it
    const ownersOnly = await roomOf(t, w, w.owner.id);
    const [hidden] = await messages(t, w, 1, ownersOnly.id);
    await refused(await keyOf(w.member.id, ['messages:write']), ownersOnly.id, hidden, 404, 'not_found');
    // a message of another room answers as one that does not exist
    await refused(w.key, ownersOnly.id, id, 404, 'not_found');
    // another organization's key: the room does not exist for it
    await refused(other.key, w.roomId, id, 404, 'not_found');

    expect([await pinsOf(t, w), await pinsOf(t, w, ownersOnly.id)]).toEqual([[], []]);
    expect(await eventsOf(t, w, 'message.pinned')).toEqual([]);
    // the member of the room may
    const member = await keyOf(w.member.id, ['messages:write']);
    expect((await call(t, 'POST', pinUrl(membersOnly.id, inside), { key: member })).status).toBe(200);
  });

  it("an agent run's delegated token pins in its own room as the agent, and nowhere else", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const side = await roomOf(t, w, w.owner.id);
    const [id] = await messages(t, w, 1);
    const [sideId] = await messages(t, w, 1, side.id);
    await using rx = await startReceiver([{ status: 202 }]);
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    expect((await startRun(t, await invokerKey(t.rt, w), w.roomId, connector.id)).status).toBe(202);
    await invokeDue(t.rt);
    const delegated = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;

    await using c = await connectMcp(t, { token: delegated });
    const pinned = await c.callTool({ name: 'pin_message', arguments: { roomId: w.roomId, messageId: id } });
    expect(bodyOf(pinned)).toMatchObject({ messageId: id, pinnedById: w.owner.id });
    const refused = await c.callTool({ name: 'pin_message', arguments: { roomId: side.id, messageId: sideId } });
    expect(bodyOf(refused).error.code).toBe('not_found');
    const [event] = await eventsOf(t, w, 'message.pinned');
    expect(event.actor).toBe('agent');
  });
});

describe("a room's limit of pinned messages", () => {
  it(`holds at most ${PINS_PER_ROOM}: one more is 409 invalid_state, an unpin makes room`, async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ids = await messages(t, w, PINS_PER_ROOM + 1);
    for (const id of ids.slice(0, PINS_PER_ROOM))
      expect((await call(t, 'POST', pinUrl(w.roomId, id), { key: w.key })).status).toBe(200);
    const over = await call(t, 'POST', pinUrl(w.roomId, ids[PINS_PER_ROOM]), { key: w.key });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'invalid_state',
      details: { reason: 'pin_limit_reached', limit: PINS_PER_ROOM },
    });
    // a pinned message pinned again is no new pin: still answered
    expect((await call(t, 'POST', pinUrl(w.roomId, ids[0]), { key: w.key })).status).toBe(200);
    expect((await call(t, 'DELETE', pinUrl(w.roomId, ids[0]), { key: w.key })).status).toBe(200);
    expect((await call(t, 'POST', pinUrl(w.roomId, ids[PINS_PER_ROOM]), { key: w.key })).status).toBe(200);
    expect(await pinsOf(t, w)).toHaveLength(PINS_PER_ROOM);
  });

  it('is not passed by pins sent at once', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ids = await messages(t, w, PINS_PER_ROOM + 4);
    for (const id of ids.slice(0, PINS_PER_ROOM - 2))
      expect((await call(t, 'POST', pinUrl(w.roomId, id), { key: w.key })).status).toBe(200);
    const answers = await Promise.all(
      ids.slice(PINS_PER_ROOM - 2).map((id) => call(t, 'POST', pinUrl(w.roomId, id), { key: w.key })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 409, 409, 409, 409]);
    expect(await pinsOf(t, w)).toHaveLength(PINS_PER_ROOM);
    const n = await sql<{ n: number | string }>(t.rt.ds, 'SELECT COUNT(*) AS "n" FROM "message_pins"');
    expect(Number(n.rows[0].n)).toBe(PINS_PER_ROOM);
  });
});

describe('pinned messages over MCP, and their events', () => {
  it('the same three operations as tools, the events delivered to a webhook and announced to a subscriber', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const [id] = await messages(t, w, 1);
    await using rx = await startReceiver();
    await addWebhook(t.rt, w.roomId, rx.url);
    const messagesUri = `svc://rooms/${w.roomId}/messages`;
    const listen = await openListen(t, { resourceSubscriptions: [messagesUri] }, { token: w.key });
    try {
      await listen.nextMessage(); // the acknowledgement
      await using c = await connectMcp(t, { token: w.key });
      const tools = (await c.listTools()).tools.filter((x) => /pin/.test(x.name));
      const hints = tools.map((x) => [x.name, x.annotations?.readOnlyHint, x.annotations?.idempotentHint]);
      expect(hints.sort()).toEqual([
        ['list_pinned_messages', true, true],
        ['pin_message', false, true],
        ['unpin_message', false, true],
      ]);
      const args = { roomId: w.roomId, messageId: id };
      expect(bodyOf(await c.callTool({ name: 'pin_message', arguments: args }))).toMatchObject({ messageId: id });
      expect((await listen.nextMessage()).params.uri).toBe(messagesUri);
      const list = bodyOf(await c.callTool({ name: 'list_pinned_messages', arguments: { roomId: w.roomId } }));
      expect(list.data.map((p: { id: string; body: string }) => [p.id, p.body])).toEqual([[id, 'm0']]);
      expect(bodyOf(await c.callTool({ name: 'unpin_message', arguments: args }))).toEqual({
        messageId: id,
        pinned: false,
      });
      expect((await listen.nextMessage()).params.uri).toBe(messagesUri);
      // a message of no room the caller has: the tool's error, as REST's
      const missing = await c.callTool({ name: 'pin_message', arguments: { ...args, messageId: 'msg_0000' } });
      expect([missing.isError, bodyOf(missing).error.code]).toEqual([true, 'not_found']);
    } finally {
      listen.close();
    }
    // both events reach the room's webhook, signed as every event
    await createWebhookWorker({ services: t.rt.services }).runOnce();
    const delivered = rx.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { type: string; data: any });
    expect(delivered.map((d) => [d.type, d.data.object])).toEqual([
      ['message.pinned', { type: 'message', id }],
      ['message.unpinned', { type: 'message', id }],
    ]);
    expect(rx.requests[0].headers['webhook-signature']).toMatch(/^v1,/);
  });
});
