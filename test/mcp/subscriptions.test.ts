import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { Room } from '../../db/entities/index.js';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { emitEvent } from '../../src/domain/events.js';
import type { Actor } from '../../src/domain/actor.js';
import { ALL_SCOPES, call, createWorld, issueKey, startTestServer, type World } from '../helpers/harness.js';
import type { TestServer } from '../helpers/harness.js';
import { openListen } from './listenStream.js';
import { createRoom } from '../../src/domain/rooms.js';
import { startReceiver } from '../webhooks/helpers.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';

const ACK = 'notifications/subscriptions/acknowledged';
const UPDATED = 'notifications/resources/updated';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

const messagesOf = (roomId: string) => `svc://rooms/${roomId}/messages`;
const postMessage = (t: TestServer, w: World, body = 'hello') =>
  call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body } });

/** The stream's rows of the audit log (one when it opens, one when it ends). */
const listenRows = async (t: TestServer) =>
  (
    await sql<{ statusCode: number; errorCode: string | null; apiKeyId: string | null }>(
      t.rt.services.ds,
      'SELECT "statusCode", "errorCode", "apiKeyId" FROM "audit_log" WHERE "routePattern" = ? ORDER BY "createdAt", "id"',
      ['subscriptions/listen'],
    )
  ).rows;

describe('MCP subscriptions/listen (2026-07-28)', () => {
  it('acknowledges first, then announces each committed change of a subscribed resource, and never a rolled-back one', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const uris = [messagesOf(w.roomId), `svc://rooms/${w.roomId}/tasks`];
    const s = await openListen(t, { resourceSubscriptions: uris, toolsListChanged: true }, { token: w.key, id: 7 });
    try {
      expect(s.status).toBe(200);
      const ack = await s.nextMessage();
      // toolsListChanged is not served (the tool list never changes at run time): left out of the acknowledgement
      expect(ack).toEqual({
        jsonrpc: '2.0',
        method: ACK,
        params: { notifications: { resourceSubscriptions: uris }, _meta: { [SUBSCRIPTION_ID]: 7 } },
      });

      // a task written and rolled back: its event never commits, so nothing is said about the tasks
      const s_ = t.rt.services;
      const actor = { kind: 'app', userId: w.owner.id, organizationId: w.orgId } as Actor;
      await expect(
        s_.ds.transaction(async (m) => {
          const room = await m.findOneByOrFail(Room, { id: w.roomId });
          await emitEvent(m, {
            type: 'task.created',
            room,
            object: { type: 'task', id: 'task_rolledback' },
            actor,
            now: s_.now(),
          });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect((await postMessage(t, w)).status).toBe(201);
      expect(await s.nextMessage()).toEqual({
        jsonrpc: '2.0',
        method: UPDATED,
        params: { uri: messagesOf(w.roomId), _meta: { [SUBSCRIPTION_ID]: 7 } },
      });
      expect((await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key: w.key, body: { title: 'T' } })).status).toBe(
        201,
      );
      expect((await s.nextMessage()).params.uri).toBe(`svc://rooms/${w.roomId}/tasks`);
    } finally {
      s.close();
    }
  });

  it('works with the v2 SDK client: listen, a notification after a REST write, close', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const client = new ClientV2({ name: 'svc-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const updated: string[] = [];
    let heard: () => void = () => undefined;
    const arrived = new Promise<void>((r) => (heard = r));
    client.setNotificationHandler(UPDATED, (n) => {
      updated.push((n.params as { uri: string }).uri);
      heard();
    });
    await client.connect(
      new TransportV2(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${w.key}` } } }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const sub = await client.listen({ resourceSubscriptions: [messagesOf(w.roomId)] });
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [messagesOf(w.roomId)] });
      expect((await postMessage(t, w)).status).toBe(201);
      await arrived;
      expect(updated).toEqual([messagesOf(w.roomId)]);
      await sub.close();
      expect(await sub.closed).toBe('local');
    } finally {
      await client.close();
    }
  });

  it('ends the stream with the graceful result when the key is revoked, and writes one audit row at each end', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: w.key, id: 'a' });
    expect((await s.nextMessage()).method).toBe(ACK);
    // revoked as the developer page and `svc key revoke` revoke it
    await t.rt.services.ds.transaction((m) => revokeApiKey(m, t.rt.services.now(), w.keyId));
    expect(await s.nextMessage()).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      result: {
        resultType: 'complete',
        _meta: {
          [SUBSCRIPTION_ID]: 'a',
          'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'svc' }),
        },
      },
    });
    expect(await s.nextMessage()).toBeNull();
    expect(await listenRows(t)).toEqual([
      { statusCode: 200, errorCode: null, apiKeyId: w.keyId },
      { statusCode: 200, errorCode: 'unauthorized', apiKeyId: w.keyId },
    ]);
  });

  it("ends the stream when the caller's room membership is removed", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const s = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: member.token });
    expect((await s.nextMessage()).method).toBe(ACK);
    await sql(t.rt.services.ds, 'DELETE FROM "room_members" WHERE "roomId" = ? AND "userId" = ?', [
      w.roomId,
      w.member.id,
    ]);
    expect((await s.nextMessage()).result).toMatchObject({ resultType: 'complete' });
    expect(await s.nextMessage()).toBeNull();
  });

  it('announces resources/list_changed when the caller gains a room', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = await openListen(t, { resourcesListChanged: true }, { token: w.key });
    try {
      expect((await s.nextMessage()).params.notifications).toEqual({ resourcesListChanged: true });
      expect((await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'Another' } })).status).toBe(201);
      expect((await s.nextMessage()).method).toBe('notifications/resources/list_changed');
    } finally {
      s.close();
    }
  });

  it('refuses what the caller cannot read as if it did not exist, and malformed filters, with JSON-RPC errors', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const refused = async (notifications: unknown) => {
      const s = await openListen(t, notifications, { token: w.key });
      expect(s.status).toBe(200);
      return s.error!;
    };
    const foreign = await refused({ resourceSubscriptions: [messagesOf(other.roomId)] });
    const missing = await refused({ resourceSubscriptions: [messagesOf('room_01JZZZZZZZZZZZZZZZZZZZZZZZ')] });
    expect(foreign.code).toBe(-32602);
    expect(missing.code).toBe(-32602);
    const shape = (e: { message: string }) => e.message.replace(/room_[0-9A-Z]+/, 'room_X');
    expect(shape(foreign)).toBe(shape(missing));
    expect(foreign.data).toEqual({ uri: messagesOf(other.roomId) });
    // each refusal is on record, as a refused room and a missing one alike
    expect((await listenRows(t)).map((r) => [r.statusCode, r.errorCode])).toEqual([
      [404, 'not_found'],
      [404, 'not_found'],
    ]);
    // a DM room and another room's record named under a readable room: not found either
    expect((await refused({ resourceSubscriptions: [messagesOf(w.dmRoomId)] })).code).toBe(-32602);
    const rec = await call(t, 'POST', `/v1/rooms/${other.roomId}/records`, {
      key: other.key,
      body: { title: 'x', body: 'y' },
    });
    expect(
      (await refused({ resourceSubscriptions: [`svc://rooms/${w.roomId}/records/${rec.body.id ?? 'rec_x'}`] })).code,
    ).toBe(-32602);
    for (const bad of [
      { resourceSubscriptions: ['https://example.com/'] },
      { resourceSubscriptions: ['svc://rooms/../etc'] },
      { resourceSubscriptions: 'svc://rooms' },
      { resourceSubscriptions: Array.from({ length: 101 }, (_, i) => `svc://rooms/room_${i}/messages`) },
      null,
    ])
      expect((await refused(bad)).code, JSON.stringify(bad).slice(0, 80)).toBe(-32602);
    // a key without messages:read may not subscribe to messages
    const narrow = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'rooms:read'],
    });
    const s = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: narrow.token });
    expect(s.error?.code).toBe(-32602);
    // nothing to honour: acknowledged with an empty filter, then ended gracefully
    const empty = await openListen(t, { promptsListChanged: true }, { token: w.key });
    expect((await empty.nextMessage()).params.notifications).toEqual({});
    expect((await empty.nextMessage()).result.resultType).toBe('complete');
  });

  it('holds at most SVC_MCP_MAX_STREAMS streams per credential, and a stream dropped in a loop gives its slot back', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS: '2' } });
    const w = await createWorld(t.rt);
    const filter = { resourceSubscriptions: [messagesOf(w.roomId)] };
    for (let i = 0; i < 20; i++) {
      const s = await openListen(t, filter, { token: w.key });
      expect((await s.nextMessage()).method).toBe(ACK);
      s.close();
    }
    // the slots come back as the server sees each client go; two streams open again
    const open = [];
    for (let i = 0; open.length < 2 && i < 200; i++) {
      const s = await openListen(t, filter, { token: w.key });
      if (s.error) continue;
      expect((await s.nextMessage()).method).toBe(ACK);
      open.push(s);
    }
    expect(open).toHaveLength(2);
    const third = await openListen(t, filter, { token: w.key, id: 3 });
    expect(third.error).toMatchObject({ code: -32603, data: { maxStreams: 2 } });
    expect(third.error!.message).toMatch(/Subscription limit reached/);
    // another credential has slots of its own
    const other = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const theirs = await openListen(t, filter, { token: other.token });
    expect((await theirs.nextMessage()).method).toBe(ACK);
    // both streams still deliver
    expect((await postMessage(t, w)).status).toBe(201);
    for (const s of [...open, theirs]) expect((await s.nextMessage()).method).toBe(UPDATED);
    for (const s of [...open, theirs]) s.close();
  });

  it('counts the streams of every process on the database against the cap: leases of another process hold slots until they expire', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS: '2' } });
    const w = await createWorld(t.rt);
    const filter = { resourceSubscriptions: [messagesOf(w.roomId)] };
    const leases = async () =>
      (
        await sql<{ id: string; credential: string; expiresAt: string }>(
          t.rt.services.ds,
          'SELECT "id", "credential", "expiresAt" FROM "mcp_stream_leases" ORDER BY "id"',
        )
      ).rows;
    const first = await openListen(t, filter, { token: w.key });
    expect((await first.nextMessage()).method).toBe(ACK);
    const [mine] = await leases();
    expect(mine.credential).toMatch(/:/);
    expect(mine.credential).not.toContain(w.key); // the credential's id, never its secret
    expect(Date.parse(mine.expiresAt)).toBeGreaterThan(Date.now());

    // another process on the same database holds a live stream of the same credential, and once held an expired one
    const later = new Date(Date.now() + 60_000).toISOString();
    const earlier = new Date(Date.now() - 60_000).toISOString();
    const insert = 'INSERT INTO "mcp_stream_leases" ("id", "credential", "expiresAt") VALUES (?, ?, ?)';
    await sql(t.rt.services.ds, insert, ['lease_elsewhere_live', mine.credential, later]);
    await sql(t.rt.services.ds, insert, ['lease_elsewhere_dead', mine.credential, earlier]);
    const refused = await openListen(t, filter, { token: w.key, id: 9 });
    expect(refused.error).toMatchObject({ code: -32603, data: { maxStreams: 2 } });
    expect((await leases()).map((l) => l.id)).not.toContain('lease_elsewhere_dead'); // swept when counted

    // the other process's stream ends: its slot is free again
    await sql(t.rt.services.ds, 'DELETE FROM "mcp_stream_leases" WHERE "id" = ?', ['lease_elsewhere_live']);
    const second = await openListen(t, filter, { token: w.key });
    expect((await second.nextMessage()).method).toBe(ACK);
    expect(await leases()).toHaveLength(2);

    // a stream that ends gives its lease back (the server sees the client go, then deletes the row)
    first.close();
    second.close();
    let left = await leases();
    for (let i = 0; left.length && i < 1000; i++) {
      await new Promise((r) => setTimeout(r, 10));
      left = await leases();
    }
    expect(left).toEqual([]);
  });

  it("limits a delegated agent token to its run's room, and ends its stream when the run is cancelled", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const key = await invokerKey(t.rt, w);
    const s_ = t.rt.services;
    const second = await s_.ds.transaction((m) =>
      createRoom(m, s_.now(), { name: 'Second', createdById: w.owner.id, organizationId: w.orgId }),
    );
    await using rx = await startReceiver();
    rx.script.push({ status: 202 });
    const connector = await addConnector(t.rt, w.orgId, rx.url);
    const run = await startRun(t, key, w.roomId, connector.id);
    expect(run.status).toBe(202);
    await invokeDue(t.rt);
    const token = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;

    // another room the delegating person can read: answered as a room that does not exist
    const other = await openListen(t, { resourceSubscriptions: [messagesOf(second.id)] }, { token });
    expect(other.error).toMatchObject({ code: -32602, data: { uri: messagesOf(second.id) } });
    expect(other.error!.message).toBe(`Resource not found: ${messagesOf(second.id)}`);

    const own = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token });
    expect((await own.nextMessage()).method).toBe(ACK);
    // the run ends: its delegated token stops, and so does the stream, gracefully
    expect((await call(t, 'POST', `/v1/rooms/${w.roomId}/agent-runs/${run.body.id}/cancel`, { key })).status).toBe(200);
    expect((await own.nextMessage()).result).toMatchObject({ resultType: 'complete' });
    expect(await own.nextMessage()).toBeNull();
  });

  it('is refused without a valid credential, as every /mcp request', async () => {
    await using t = await startTestServer();
    const s = await openListen(t, { resourcesListChanged: true }, { token: 'svc_test_nope' });
    expect(s.status).toBe(401);
  });
});
