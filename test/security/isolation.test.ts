import { describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { addMemberAsOperator, createRoom } from '../../src/domain/rooms.js';
import { createUser } from '../../src/domain/users.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { call, createWorld, issueKey, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';

// Tenancy: whatever lies outside the credential's organization or personal
// scope answers 404 as if it did not exist; direct-message rooms answer 404 room_not_found.

async function contentOf(t: TestServer, w: World) {
  const room = `/v1/rooms/${w.roomId}`;
  const post = async (p: string, body: unknown) => (await call(t, 'POST', `${room}${p}`, { key: w.key, body })).body;
  const msg = await post('/messages', { body: 'secret plans' });
  const task = await post('/tasks', { title: 'secret task' });
  const rec = await post('/records', { title: 'secret minutes' });
  const file: any = await (
    await t.fetch(`${room}/files?filename=s.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'text/plain' },
      body: 'secret',
    })
  ).json();
  const hook = (
    await createWebhook(t.rt.services, { roomId: w.roomId, url: 'http://127.0.0.1:9/hook', createdById: w.owner.id })
  ).webhook.id;
  await post('/messages', { body: 'fires a delivery' });
  const deliveries = await call(t, 'GET', `${room}/webhooks/${hook}/deliveries`, { key: w.key });
  return {
    msg: msg.id,
    task: task.id,
    rec: rec.id,
    file: file.id,
    hook,
    delivery: deliveries.body.data[0].id as string,
  };
}

/** Every room-scoped operation on `roomId` with the given object ids: [method, path, body]. */
const roomOperations = (
  roomId: string,
  o: { task: string; rec: string; file: string; hook: string; delivery: string },
): [string, string, unknown?][] => {
  const room = `/v1/rooms/${roomId}`;
  return [
    ['GET', room],
    ['PATCH', room, { name: 'pwned' }],
    ['GET', `${room}/members`],
    ['POST', `${room}/members`, { userId: 'usr_01X' }],
    ['GET', `${room}/messages`],
    ['POST', `${room}/messages`, { body: 'x' }],
    ['GET', `${room}/tasks`],
    ['POST', `${room}/tasks`, { title: 'x' }],
    ['GET', `${room}/tasks/${o.task}`],
    ['PATCH', `${room}/tasks/${o.task}`, { title: 'pwned' }],
    ['GET', `${room}/records`],
    ['POST', `${room}/records`, { title: 'x' }],
    ['GET', `${room}/records/${o.rec}`],
    ['PATCH', `${room}/records/${o.rec}`, { title: 'pwned' }],
    ['DELETE', `${room}/records/${o.rec}`],
    ['POST', `${room}/records/${o.rec}/approval/request`, {}],
    ['GET', `${room}/files/${o.file}`],
    ['GET', `${room}/files/${o.file}/content`],
    ['GET', `${room}/webhooks`],
    ['GET', `${room}/webhooks/${o.hook}/deliveries`],
    ['POST', `${room}/webhooks/${o.hook}/deliveries/${o.delivery}/redeliver`],
  ];
};

describe('security: isolation', () => {
  it("cross-tenant access (IDOR): every operation on another organization's room and objects answers 404 not_found and changes nothing", async () => {
    await using t = await startTestServer();
    const a = await createWorld(t.rt, 'Attacker');
    const b = await createWorld(t.rt, 'Victim');
    const ids = await contentOf(t, b);
    for (const [method, path, body] of roomOperations(b.roomId, ids)) {
      const r = await call(t, method, path, { key: a.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code, `${method} ${path}`).toBe('not_found');
    }
    // the victim's objects through the attacker's own room: still not found
    for (const [method, path, body] of roomOperations(a.roomId, ids).filter(([, p]) =>
      /\/(tasks|records|files|webhooks)\/\w+/.test(p),
    )) {
      expect((await call(t, method, path, { key: a.key, body })).status, `${method} ${path}`).toBe(404);
    }
    const tool = await postMcp(t, toolCall('get_record', { roomId: b.roomId, recordId: ids.rec }), { token: a.key });
    expect(tool.body.result.isError).toBe(true);
    expect(JSON.parse(tool.body.result.content[0].text)).toMatchObject({ error: { code: 'not_found' } });
    // nothing of the victim leaked into lists, nothing changed
    const events = await call(t, 'GET', `/v1/events?roomId=${b.roomId}&limit=200`, { key: a.key });
    expect(events.status === 404 || events.body.data.length === 0).toBe(true);
    const all = await call(t, 'GET', '/v1/events?limit=200', { key: a.key });
    expect(JSON.stringify(all.body)).not.toContain(b.roomId);
    expect(
      (await call(t, 'GET', '/v1/rooms', { key: a.key })).body.data.map((r: { id: string }) => r.id),
    ).not.toContain(b.roomId);
    const rec = await call(t, 'GET', `/v1/rooms/${b.roomId}/records/${ids.rec}`, { key: b.key });
    expect(rec.body).toMatchObject({ title: 'secret minutes' });
    expect((await call(t, 'GET', `/v1/rooms/${b.roomId}`, { key: b.key })).body.name).toBe('General');
  });

  it('personal key against organization data, and organization key against personal data: 404 both ways', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    const personalRoom = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Diary', createdById: w.owner.id, organizationId: null }),
    );
    const personal = await issueKey(t.rt, {
      userId: w.owner.id,
      scopes: ['rooms:read', 'messages:read', 'messages:write'],
    });
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: personal.token })).status).toBe(404);
    expect(
      (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: personal.token, body: { body: 'x' } })).status,
    ).toBe(404);
    expect((await call(t, 'GET', `/v1/rooms/${personalRoom.id}`, { key: w.key })).status).toBe(404);
    expect((await call(t, 'GET', `/v1/rooms/${personalRoom.id}`, { key: personal.token })).status).toBe(200);
  });

  it('adding a user of another organization to a personal room (cross-tenant reach, "user exists" oracle): 404 not_found exactly as an unknown user, REST and MCP, nothing added', async () => {
    await using t = await startTestServer();
    const a = await createWorld(t.rt, 'Attacker');
    const b = await createWorld(t.rt, 'Victim');
    const s = t.rt.services;
    const diary = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Diary', createdById: a.owner.id, organizationId: null }),
    );
    const loner = await s.ds.transaction((m) =>
      createUser(m, s.now(), { email: `loner-${Date.now()}@example.test`, name: 'Loner', password: 'pw-loner-secret' }),
    );
    const personal = await issueKey(t.rt, { userId: a.owner.id, scopes: ['rooms:read', 'rooms:write', 'mcp:tools'] });
    const unknownUser = newId('usr');
    const members = `/v1/rooms/${diary.id}/members`;
    const shape = (r: { status: number; body: any }) => ({
      status: r.status,
      code: r.body.error?.code,
      message: r.body.error?.message,
      details: r.body.error?.details,
    });

    const unknown = shape(await call(t, 'POST', members, { key: personal.token, body: { userId: unknownUser } }));
    expect(unknown).toMatchObject({ status: 404, code: 'not_found' });
    // a user of another organization, and a user of no organization: answered exactly like the unknown one
    for (const userId of [b.owner.id, b.member.id, loner.id]) {
      expect(shape(await call(t, 'POST', members, { key: personal.token, body: { userId } })), userId).toEqual(unknown);
    }
    const mcpShape = async (userId: string) => {
      const r = await postMcp(t, toolCall('add_room_member', { roomId: diary.id, userId }), { token: personal.token });
      const { requestId: _, ...error } = JSON.parse(r.body.result.content[0].text).error;
      return { isError: r.body.result.isError, error };
    };
    const unknownOverMcp = await mcpShape(unknownUser);
    expect(unknownOverMcp).toMatchObject({ isError: true, error: { code: 'not_found' } });
    expect(await mcpShape(b.owner.id)).toEqual(unknownOverMcp);
    // the organization room of the attacker: a user of another organization is unknown there too
    expect(
      shape(await call(t, 'POST', `/v1/rooms/${a.roomId}/members`, { key: a.key, body: { userId: b.owner.id } })),
    ).toEqual(unknown);

    // nobody was added; someone who shares an organization with the caller can be
    const listed = async () =>
      (await call(t, 'GET', members, { key: personal.token })).body.data.map((r: { userId: string }) => r.userId);
    expect(await listed()).toEqual([a.owner.id]);
    expect((await call(t, 'POST', members, { key: personal.token, body: { userId: a.member.id } })).status).toBe(201);
    expect(await listed()).toEqual([a.owner.id, a.member.id]);
  });

  it('a member reaching for a room of their organization they are not in: 404; for one they are in but may not manage: 403', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    const hidden = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Board', createdById: w.owner.id, organizationId: w.orgId }),
    );
    const member = await issueKey(t.rt, {
      userId: w.member.id,
      organizationId: w.orgId,
      scopes: ['rooms:read', 'rooms:write', 'webhooks:read'],
    });
    expect((await call(t, 'GET', `/v1/rooms/${hidden.id}`, { key: member.token })).status).toBe(404);
    await s.ds.transaction((m) => addMemberAsOperator(m, s.now(), hidden.id, w.member.id));
    expect(
      (await call(t, 'PATCH', `/v1/rooms/${hidden.id}`, { key: member.token, body: { name: 'mine' } })).status,
    ).toBe(403);
    expect((await call(t, 'GET', `/v1/rooms/${hidden.id}/webhooks`, { key: member.token })).status).toBe(403);
  });

  it('direct-message room probing: every path answers 404 room_not_found on REST and MCP, and no list shows it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const ids = { task: 'task_01X', rec: 'rec_01X', file: 'file_01X', hook: 'wh_01X', delivery: 'whd_01X' };
    for (const [method, path, body] of roomOperations(w.dmRoomId, ids)) {
      const r = await call(t, method, path, { key: w.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code, `${method} ${path}`).toBe('room_not_found');
    }
    const tool = await postMcp(t, toolCall('list_messages', { roomId: w.dmRoomId }), { token: w.key });
    expect(JSON.parse(tool.body.result.content[0].text).error.code).toBe('room_not_found');
    expect(
      (await call(t, 'GET', '/v1/rooms?limit=200', { key: w.key })).body.data.map((r: { id: string }) => r.id),
    ).not.toContain(w.dmRoomId);
    const events = await call(t, 'GET', `/v1/events?roomId=${w.dmRoomId}`, { key: w.key });
    expect(events.status === 404 || events.body.data.length === 0).toBe(true);
  });
});
