import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { connectMcp } from './mcpClient.js';

const T0 = Date.parse('2026-11-22T09:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

/** A server whose clock the test moves: items get distinct, known creation times. */
async function clockedServer() {
  let now = at(0);
  const t = await startTestServer({ now: () => now });
  return Object.assign(t, { setMinute: (m: number) => void (now = at(m)) });
}

describe('lists for agents: newest first and since, over REST and MCP', () => {
  it('lists messages, tasks and events newest first with keyset paging, and since a time', async () => {
    await using t = await clockedServer();
    const w = await createWorld(t.rt);
    const rest = (method: string, p: string, body?: unknown) => call(t, method, p, { key: w.key, body });
    for (const [i, body] of ['first', 'second', 'third'].entries()) {
      t.setMinute(i + 1);
      expect((await rest('POST', `/v1/rooms/${w.roomId}/messages`, { body })).status).toBe(201);
      expect((await rest('POST', `/v1/rooms/${w.roomId}/tasks`, { title: `task ${body}` })).status).toBe(201);
    }
    const base = `/v1/rooms/${w.roomId}/messages`;
    const bodies = (r: { body: { data: { body: string }[] } }) => r.body.data.map((m) => m.body);
    expect(bodies(await rest('GET', base))).toEqual(['first', 'second', 'third']);
    expect(bodies(await rest('GET', `${base}?order=asc`))).toEqual(['first', 'second', 'third']);
    const p1 = await rest('GET', `${base}?order=desc&limit=2`);
    expect(bodies(p1)).toEqual(['third', 'second']);
    const p2 = await rest('GET', `${base}?order=desc&limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(bodies(p2)).toEqual(['first']);
    expect(p2.body.nextCursor).toBeNull();
    // a cursor continues only the order it was issued in
    const mixed = await rest('GET', `${base}?order=asc&limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatchObject({ code: 'validation_error', details: { field: 'cursor' } });
    const ascPage = await rest('GET', `${base}?limit=2`);
    expect((await rest('GET', `${base}?order=desc&cursor=${encodeURIComponent(ascPage.body.nextCursor)}`)).status).toBe(
      400,
    );
    expect(bodies(await rest('GET', `${base}?limit=2&cursor=${encodeURIComponent(ascPage.body.nextCursor)}`))).toEqual([
      'third',
    ]);
    // since: created at or after, in either order; any offset is read as the same instant
    expect(bodies(await rest('GET', `${base}?since=${encodeURIComponent(at(2).toISOString())}`))).toEqual([
      'second',
      'third',
    ]);
    expect(
      bodies(await rest('GET', `${base}?order=desc&since=${encodeURIComponent('2026-11-22T10:02:00+01:00')}`)),
    ).toEqual(['third', 'second']);
    expect((await rest('GET', `${base}?since=yesterday`)).status).toBe(400);
    expect((await rest('GET', `${base}?order=sideways`)).status).toBe(400);

    const tasks = await rest(
      'GET',
      `/v1/rooms/${w.roomId}/tasks?order=desc&since=${encodeURIComponent(at(2).toISOString())}`,
    );
    expect(tasks.body.data.map((x: { title: string }) => x.title)).toEqual(['task third', 'task second']);
    const events = await rest('GET', `/v1/events?order=desc&limit=2&type=message.created`);
    expect(events.body.data.map((e: { createdAt: string }) => e.createdAt)).toEqual([
      at(3).toISOString(),
      at(2).toISOString(),
    ]);
    const more = await rest(
      'GET',
      `/v1/events?order=desc&limit=2&type=message.created&cursor=${encodeURIComponent(events.body.nextCursor)}`,
    );
    expect(more.body.data.map((e: { createdAt: string }) => e.createdAt)).toEqual([at(1).toISOString()]);

    // the same procedures as MCP tools
    await using c = await connectMcp(t, { token: w.key });
    const viaMcp = await c.callTool({
      name: 'list_messages',
      arguments: { roomId: w.roomId, order: 'desc', since: at(2).toISOString() },
    });
    expect((viaMcp.structuredContent as { data: { body: string }[] }).data.map((m) => m.body)).toEqual([
      'third',
      'second',
    ]);
  });
});

describe('search over messages and tasks', () => {
  it('finds messages and tasks of the rooms the caller can read, newest first, paged, over REST and MCP', async () => {
    await using t = await clockedServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other Org');
    const member = await issueKey(t.rt, {
      userId: w.member.id,
      organizationId: w.orgId,
      scopes: ['messages:read', 'tasks:read', 'mcp:tools'],
    });
    const rest = (key: string, method: string, p: string, body?: unknown) => call(t, method, p, { key, body });
    const privateRoom = (await rest(w.key, 'POST', '/v1/rooms', { name: 'Owners only' })).body.id;
    const post = async (minute: number, key: string, roomId: string, kind: 'messages' | 'tasks', text: string) => {
      t.setMinute(minute);
      const r = await rest(
        key,
        'POST',
        `/v1/rooms/${roomId}/${kind}`,
        kind === 'messages' ? { body: text } : { title: text },
      );
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const m1 = await post(1, w.key, w.roomId, 'messages', 'Budget draft is ready');
    const t1 = await post(2, w.key, w.roomId, 'tasks', 'Review the BUDGET');
    await post(3, w.key, privateRoom, 'messages', 'budget secrets');
    await post(4, other.key, other.roomId, 'messages', 'their budget');
    const m2 = await post(5, w.key, w.roomId, 'messages', 'Discount is 50% off');
    await post(6, w.key, w.roomId, 'messages', 'Discount is 500 off');
    await post(7, w.key, w.roomId, 'messages', 'nothing here');

    const search = (key: string, qs: string) => rest(key, 'GET', `/v1/search?${qs}`);
    const ids = (r: { body: { data: { message?: { id: string }; task?: { id: string } }[] } }) =>
      r.body.data.map((h) => h.message?.id ?? h.task?.id);
    // the member reads General only: not the owners' room, not another organization
    const hits = await search(member.token, 'q=budget');
    expect(hits.status).toBe(200);
    expect(ids(hits)).toEqual([t1, m1]);
    expect(hits.body.data[0]).toMatchObject({
      type: 'task',
      roomId: w.roomId,
      createdAt: at(2).toISOString(),
      task: { title: 'Review the BUDGET' },
    });
    // the owner (organization owner) reads every room of the organization
    expect(ids(await search(w.key, 'q=budget'))).toHaveLength(3);
    // types, paging
    expect(ids(await search(member.token, 'q=budget&types=tasks'))).toEqual([t1]);
    expect(ids(await search(member.token, 'q=budget&types=messages'))).toEqual([m1]);
    const p1 = await search(member.token, 'q=budget&limit=1');
    expect(ids(p1)).toEqual([t1]);
    const p2 = await search(member.token, `q=budget&limit=1&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(ids(p2)).toEqual([m1]);
    expect(p2.body.nextCursor).toBeNull();
    // % and _ are literal
    expect(ids(await search(member.token, `q=${encodeURIComponent('50%')}`))).toEqual([m2]);
    expect(ids(await search(member.token, 'q=is_5'))).toEqual([]);
    // bad input
    for (const qs of [
      '',
      'q=',
      'q=x&types=files',
      'q=x&cursor=nope',
      `q=x&cursor=${encodeURIComponent((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?limit=1`, { key: w.key })).body.nextCursor)}`,
    ]) {
      const bad = await search(member.token, qs);
      expect(bad.status, qs).toBe(400);
      expect(bad.body.error.code, qs).toBe('validation_error');
    }
    // scopes: messages:read for the operation; tasks need tasks:read, and are left out by default without it
    const messagesOnly = await issueKey(t.rt, {
      userId: w.member.id,
      organizationId: w.orgId,
      scopes: ['messages:read'],
    });
    expect(ids(await search(messagesOnly.token, 'q=budget'))).toEqual([m1]);
    const refused = await search(messagesOnly.token, 'q=budget&types=tasks');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_scope');
    const tasksOnly = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['tasks:read'] });
    expect((await search(tasksOnly.token, 'q=budget')).status).toBe(403);

    await using c = await connectMcp(t, { token: member.token });
    const viaMcp = await c.callTool({ name: 'search_content', arguments: { q: 'BUDGET' } });
    expect(viaMcp.isError).toBeFalsy();
    expect((viaMcp.structuredContent as { data: { type: string }[] }).data.map((h) => h.type)).toEqual([
      'task',
      'message',
    ]);
  });
});

describe('MCP resources', () => {
  it('lists templates and rooms, and reads rooms, recent messages, records and files through the tool pipeline', async () => {
    await using t = await clockedServer();
    const w = await createWorld(t.rt);
    const rest = (method: string, p: string, body?: unknown) => call(t, method, p, { key: w.key, body });
    for (const [i, body] of ['one', 'two'].entries()) {
      t.setMinute(i + 1);
      await rest('POST', `/v1/rooms/${w.roomId}/messages`, { body });
    }
    const record = (await rest('POST', `/v1/rooms/${w.roomId}/records`, { title: 'Weekly', body: 'Notes' })).body;
    const upload = (filename: string, type: string, body: Buffer | string) =>
      call(t, 'POST', `/v1/rooms/${w.roomId}/files?filename=${filename}`, {
        key: w.key,
        body: body as string,
        headers: { 'content-type': type },
      });
    const txt = (await upload('a.txt', 'text/plain', 'plain words')).body;
    const binBytes = Buffer.from([0, 1, 2, 255, 254]);
    const res = await t.fetch(`/v1/rooms/${w.roomId}/files?filename=b.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/octet-stream' },
      body: binBytes,
    });
    const bin = (await res.json()) as { id: string };

    await using c = await connectMcp(t, { token: w.key });
    expect(c.getServerCapabilities()?.resources).toBeDefined();
    const templates = (await c.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate);
    expect(templates).toEqual([
      'svc://rooms/{roomId}',
      'svc://rooms/{roomId}/messages',
      'svc://rooms/{roomId}/tasks',
      'svc://rooms/{roomId}/records',
      'svc://rooms/{roomId}/records/{recordId}',
      'svc://rooms/{roomId}/files/{fileId}',
    ]);
    const listed = (await c.listResources()).resources;
    expect(listed).toEqual([
      { uri: `svc://rooms/${w.roomId}`, name: 'General', title: 'General', mimeType: 'application/json' },
    ]);

    const read = async (uri: string) =>
      (await c.readResource({ uri })).contents[0] as { uri: string; mimeType: string; text?: string; blob?: string };
    const room = await read(`svc://rooms/${w.roomId}`);
    expect(room).toMatchObject({ uri: `svc://rooms/${w.roomId}`, mimeType: 'application/json' });
    expect(JSON.parse(room.text!)).toMatchObject({ id: w.roomId, name: 'General' });
    const messages = JSON.parse((await read(`svc://rooms/${w.roomId}/messages`)).text!);
    expect(messages.data.map((m: { body: string }) => m.body)).toEqual(['two', 'one']);
    expect(JSON.parse((await read(`svc://rooms/${w.roomId}/records/${record.id}`)).text!)).toMatchObject({
      id: record.id,
      title: 'Weekly',
    });
    expect(await read(`svc://rooms/${w.roomId}/files/${txt.id}`)).toEqual({
      uri: `svc://rooms/${w.roomId}/files/${txt.id}`,
      mimeType: 'text/plain',
      text: 'plain words',
    });
    expect(await read(`svc://rooms/${w.roomId}/files/${bin.id}`)).toEqual({
      uri: `svc://rooms/${w.roomId}/files/${bin.id}`,
      mimeType: 'application/octet-stream',
      blob: binBytes.toString('base64'),
    });
    // the resource link of a binary download reads back as the same bytes
    const link = (await c.callTool({ name: 'get_file_content', arguments: { roomId: w.roomId, fileId: bin.id } }))
      .content as { uri: string }[];
    expect((await read(link[0].uri)).blob).toBe(binBytes.toString('base64'));

    // not found (another room, a direct-message room, no template) is -32602 on every revision (MCP 2026-07-28),
    // prefixed once
    for (const uri of [
      `svc://rooms/${w.dmRoomId}`,
      `svc://rooms/room_01KAR3V6X5Q2Z8N4M7P9W1T3YB/messages`,
      'svc://nothing',
      'https://example.com/',
    ]) {
      const err = await c.readResource({ uri }).catch((e: Error & { code?: number }) => e);
      expect(err, uri).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^MCP error -32602: Resource not found/),
      });
    }

    // every read is one audited call of the procedure, surface mcp
    const rows = (await listAudit(t.rt.services, { limit: 50 }))
      .filter((a) => a.surface === 'mcp')
      .map((a) => [a.routePattern, a.statusCode]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['get_room', 200],
        ['list_messages', 200],
        ['get_record', 200],
        ['get_file_content', 200],
        ['list_rooms', 200],
        ['get_room', 404],
      ]),
    );
  });

  it("reads only what the credential's scopes allow", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const limited = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'messages:read'],
    });
    await using c = await connectMcp(t, { token: limited.token });
    expect((await c.listResources()).resources).toEqual([]);
    const err = await c
      .readResource({ uri: `svc://rooms/${w.roomId}` })
      .catch((e: Error & { code?: number; data?: any }) => e);
    expect(err).toMatchObject({ code: -32602, message: 'MCP error -32602: Missing scope: rooms:read' });
    expect((err as { data: any }).data.error.code).toBe('insufficient_scope');
    const ok = await c.readResource({ uri: `svc://rooms/${w.roomId}/messages` });
    expect(JSON.parse((ok.contents[0] as { text: string }).text).data).toEqual([]);
  });
});
