import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { catalogEntries, listProcedures } from '../../src/procedures/index.js';
import { call, createWorld, issueKey, startTestServer, type TestServer, type World } from '../helpers/harness.js';

let t: TestServer & AsyncDisposable;
let w: World;

beforeAll(async () => {
  t = await startTestServer();
  w = await createWorld(t.rt);
});
afterAll(() => t.close());

describe('every endpoint, happy path', () => {
  it('me, organizations', async () => {
    const me = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: w.owner.id,
      email: w.owner.email,
      name: 'owner',
      locale: 'en',
      organizationId: w.orgId,
      billingContext: 'organization',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const orgs = await call(t, 'GET', '/v1/organizations', { key: w.key });
    expect(orgs.body).toEqual({
      data: [{ id: w.orgId, name: 'Acme', role: 'owner', createdAt: expect.any(String) }],
      nextCursor: null,
    });
  });

  it('rooms: create, get, rename, members', async () => {
    const created = await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'Planning' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Planning',
      roomType: 0,
      organizationId: w.orgId,
      createdById: w.owner.id,
    });
    expect(created.body.id).toMatch(/^room_/);
    const id = created.body.id;
    expect((await call(t, 'GET', `/v1/rooms/${id}`, { key: w.key })).body.name).toBe('Planning');
    const renamed = await call(t, 'PATCH', `/v1/rooms/${id}`, { key: w.key, body: { name: 'Roadmap' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Roadmap');
    const added = await call(t, 'POST', `/v1/rooms/${id}/members`, { key: w.key, body: { userId: w.member.id } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ roomId: id, userId: w.member.id });
    const members = await call(t, 'GET', `/v1/rooms/${id}/members`, { key: w.key });
    expect(members.body.data.map((m: any) => m.userId).sort()).toEqual([w.owner.id, w.member.id].sort());
  });

  it('messages', async () => {
    const posted = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'Hello' } });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({ roomId: w.roomId, authorId: w.owner.id, postedBy: 'app', body: 'Hello' });
    const list = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key });
    expect(list.body.data.some((m: any) => m.id === posted.body.id)).toBe(true);
  });

  it('tasks', async () => {
    const created = await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, {
      key: w.key,
      body: { title: 'Write spec', assigneeId: w.member.id, startDate: '2026-12-01', dueDate: '2026-12-05' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      title: 'Write spec',
      status: 'todo',
      assigneeId: w.member.id,
      startDate: '2026-12-01',
      dueDate: '2026-12-05',
    });
    const id = created.body.id;
    const updated = await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/${id}`, {
      key: w.key,
      body: { status: 'done', dueDate: '2026-12-09' },
    });
    expect(updated.body).toMatchObject({ status: 'done', dueDate: '2026-12-09', title: 'Write spec' });
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks/${id}`, { key: w.key })).body.status).toBe('done');
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks`, { key: w.key })).body.data.length).toBeGreaterThan(0);
    const badDates = await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/${id}`, {
      key: w.key,
      body: { startDate: '2026-12-31' },
    });
    expect(badDates.status).toBe(400);
    // business rules the schema cannot state answer rule_violation, not the schema's validation_error
    expect(badDates.body.error.code).toBe('rule_violation');
    // a refused update changes nothing (the update and its check run in one transaction, taken back whole)
    const notMember = await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/${id}`, {
      key: w.key,
      body: { title: 'Renamed', assigneeId: 'usr_01KAR3V6X5Q2Z8N4M7P9W1T3YB' },
    });
    expect([notMember.status, notMember.body.error.code]).toEqual([400, 'rule_violation']);
    const blank = await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/${id}`, { key: w.key, body: { title: ' ' } });
    expect(blank.status).toBe(400);
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/tasks/${id}`, { key: w.key })).body).toEqual(updated.body);
    const missing = await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/task_01KAR3V6X5Q2Z8N4M7P9W1T3YB`, {
      key: w.key,
      body: { status: 'done' },
    });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
    // and leaves no event: one task.updated, the accepted update's (a refused one's event goes back with it)
    const events = await call(t, 'GET', `/v1/events?type=task.updated&roomId=${w.roomId}&limit=200`, { key: w.key });
    expect(events.body.data.map((e: any) => e.data.object.id)).toEqual([id]);
    const outsider = await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, {
      key: w.key,
      body: { title: 'x', assigneeId: 'usr_01KAR3V6X5Q2Z8N4M7P9W1T3YB' },
    });
    expect(outsider.status).toBe(400);
    expect(outsider.body.error.code).toBe('rule_violation');
  });

  it('records and the approval flow', async () => {
    const rec = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
      key: w.key,
      body: { title: 'Weekly', body: 'notes' },
    });
    expect(rec.status).toBe(201);
    expect(rec.body.approvalState).toBe('none');
    const p = `/v1/rooms/${w.roomId}/records/${rec.body.id}`;
    expect((await call(t, 'GET', p, { key: w.key })).body.title).toBe('Weekly');
    expect((await call(t, 'PATCH', p, { key: w.key, body: { body: 'more notes' } })).body.body).toBe('more notes');
    const requested = await call(t, 'POST', `${p}/approval/request`, { key: w.key });
    expect(requested.status).toBe(200);
    expect(requested.body.record.approvalState).toBe('pending');
    const selfApprove = await call(t, 'POST', `${p}/approval/approve`, { key: w.key });
    expect(selfApprove.status).toBe(403);
    const memberKey = await issueKey(t.rt, {
      userId: w.member.id,
      organizationId: w.orgId,
      scopes: ['records:write', 'records:read'],
    });
    const approved = await call(t, 'POST', `${p}/approval/approve`, {
      key: memberKey.token,
      body: { comment: 'LGTM' },
    });
    expect(approved.status).toBe(200);
    expect(approved.body.approval).toMatchObject({
      status: 'approved',
      requestedById: w.owner.id,
      decidedById: w.member.id,
      comment: 'LGTM',
    });
    const twice = await call(t, 'POST', `${p}/approval/approve`, { key: memberKey.token });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('invalid_state');
    await call(t, 'POST', `${p}/approval/request`, { key: w.key });
    const withdrawnByOther = await call(t, 'POST', `${p}/approval/withdraw`, { key: memberKey.token });
    expect(withdrawnByOther.status).toBe(403);
    expect((await call(t, 'POST', `${p}/approval/withdraw`, { key: w.key })).body.record.approvalState).toBe(
      'withdrawn',
    );
    await call(t, 'POST', `${p}/approval/request`, { key: w.key });
    expect((await call(t, 'POST', `${p}/approval/reject`, { key: memberKey.token })).body.record.approvalState).toBe(
      'rejected',
    );
    const del = await call(t, 'DELETE', p, { key: w.key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: rec.body.id, deleted: true });
    expect((await call(t, 'GET', p, { key: w.key })).status).toBe(404);
    const events = await call(t, 'GET', `/v1/events?roomId=${w.roomId}&limit=200`, { key: w.key });
    const types = events.body.data.filter((e: any) => e.data.object.id === rec.body.id).map((e: any) => e.type);
    expect(types).toEqual([
      'record.created',
      'record.updated',
      'approval.requested',
      'record.approval_requested',
      'approval.approved',
      'record.approved',
      'approval.requested',
      'record.approval_requested',
      'approval.withdrawn',
      'approval.requested',
      'record.approval_requested',
      'approval.rejected',
      'record.deleted',
    ]);
  });

  it('files: upload raw bytes attached to a message, metadata, streamed download', async () => {
    const msg = await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, {
      key: w.key,
      body: { body: 'see attachment' },
    });
    const bytes = Buffer.from('%PDF-1.4 hello\x00\xff', 'binary');
    const up = await t.fetch(
      `/v1/rooms/${w.roomId}/files?filename=${encodeURIComponent('min utes.pdf')}&messageId=${msg.body.id}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/pdf' },
        body: bytes,
      },
    );
    expect(up.status).toBe(201);
    const file = (await up.json()) as any;
    expect(file).toMatchObject({
      filename: 'min utes.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      messageId: msg.body.id,
    });
    const meta = await call(t, 'GET', `/v1/rooms/${w.roomId}/files/${file.id}`, { key: w.key });
    expect(meta.body.sha256).toBe(file.sha256);
    const dl = await t.fetch(`/v1/rooms/${w.roomId}/files/${file.id}/content`, {
      headers: { authorization: `Bearer ${w.key}` },
    });
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/pdf');
    expect(dl.headers.get('content-length')).toBe(String(bytes.length));
    expect(dl.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''min%20utes.pdf");
    expect(dl.headers.get('x-request-id')).toBeTruthy();
    expect(Buffer.from(await dl.arrayBuffer())).toEqual(bytes);
    const events = await call(t, 'GET', '/v1/events?type=file.uploaded', { key: w.key });
    expect(events.body.data.map((e: any) => e.data.object.id)).toContain(file.id);
  });

  it('rejects uploads over the size limit with 413 and stores nothing', async () => {
    await using small = await startTestServer({ env: { SVC_MAX_UPLOAD_BYTES: '10' } });
    const sw = await createWorld(small.rt);
    const r = await small.fetch(`/v1/rooms/${sw.roomId}/files?filename=a.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sw.key}`, 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(11),
    });
    expect(r.status).toBe(413);
    expect(((await r.json()) as any).error.code).toBe('payload_too_large');
  });

  it('event catalog', async () => {
    const r = await call(t, 'GET', '/v1/event-types', { key: w.key });
    // every type the operation modules declare, in their order; room.created the only preview
    expect(r.body.data.map((e: any) => e.type)).toEqual(catalogEntries().map((e) => e.type));
    expect(r.body.data.filter((e: any) => !e.stable).map((e: any) => e.type)).toEqual(['room.created']);
  });
});

describe('authentication and scopes', () => {
  it('401 without, with a malformed, unknown or revoked credential, in the envelope', async () => {
    const k = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    await t.rt.services.ds.transaction((m) => revokeApiKey(m, new Date(), k.id));
    const variants: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer svc_live_nope' },
      { 'x-api-key': 'svc_test_' + 'A'.repeat(43) },
      { authorization: `Bearer ${k.token}` },
      { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc' },
    ];
    for (const headers of variants) {
      const r = await call(t, 'GET', '/v1/me', { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
      expect(r.body.error.requestId).toBe(r.headers.get('x-request-id'));
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
  });

  it('403 insufficient_scope with details.required and details.granted on every operation', async () => {
    // a key holding one scope no operation here needs (agent:invoke governs the agent runs, so those are tried
    // with me:read instead)
    const k = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['agent:invoke'] });
    const other = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    for (const p of listProcedures()) {
      const path = p.meta.http.path.replace('{roomId}', w.roomId).replace(/\{\w+\}/g, 'x_01KAR3V6X5Q2Z8N4M7P9W1T3YB');
      const key = p.meta.scope === 'agent:invoke' ? other : k;
      const r = await call(t, p.meta.http.method, path, {
        key: key.token,
        body: p.meta.http.method === 'GET' ? undefined : {},
      });
      expect(r.status, p.meta.tool.name).toBe(403);
      expect(r.body.error).toMatchObject({
        code: 'insufficient_scope',
        details: { required: [p.meta.scope], granted: [key === k ? 'agent:invoke' : 'me:read'] },
      });
    }
  });
});

describe('isolation and direct-message rooms', () => {
  it('an organization key sees its organization only; a personal key its personal scope only', async () => {
    const other = await createWorld(t.rt, 'Other');
    const foreign = await call(t, 'GET', `/v1/rooms/${other.roomId}`, { key: w.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    for (const [m, p, body] of [
      ['GET', `/v1/rooms/${other.roomId}/messages`, undefined],
      ['POST', `/v1/rooms/${other.roomId}/messages`, { body: 'x' }],
      ['GET', `/v1/rooms/${other.roomId}/tasks`, undefined],
      ['POST', `/v1/rooms/${other.roomId}/records`, { title: 'x' }],
    ] as const) {
      const r = await call(t, m, p, { key: w.key, body });
      expect(r.status, p).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    expect((await call(t, 'GET', '/v1/rooms?limit=200', { key: w.key })).body.data.map((r: any) => r.id)).not.toContain(
      other.roomId,
    );
    const personal = await issueKey(t.rt, { userId: w.owner.id, scopes: ['rooms:read', 'me:read'] });
    const pr = await call(t, 'GET', `/v1/rooms/${w.roomId}`, { key: personal.token });
    expect(pr.status).toBe(404);
    expect((await call(t, 'GET', '/v1/rooms', { key: personal.token })).body.data).toEqual([]);
    const me = await call(t, 'GET', '/v1/me', { key: personal.token });
    expect(me.body).toMatchObject({ organizationId: null, billingContext: 'individual' });
  });

  it('a direct-message room answers 404 room_not_found on every room path and is never listed', async () => {
    const dm = w.dmRoomId;
    const paths: [string, string, unknown][] = [
      ['GET', `/v1/rooms/${dm}`, undefined],
      ['PATCH', `/v1/rooms/${dm}`, { name: 'x' }],
      ['GET', `/v1/rooms/${dm}/members`, undefined],
      ['POST', `/v1/rooms/${dm}/members`, { userId: w.member.id }],
      ['GET', `/v1/rooms/${dm}/messages`, undefined],
      ['POST', `/v1/rooms/${dm}/messages`, { body: 'x' }],
      ['GET', `/v1/rooms/${dm}/tasks`, undefined],
      ['POST', `/v1/rooms/${dm}/tasks`, { title: 'x' }],
      ['GET', `/v1/rooms/${dm}/records`, undefined],
      ['POST', `/v1/rooms/${dm}/records`, { title: 'x' }],
    ];
    for (const [m, p, body] of paths) {
      const r = await call(t, m, p, { key: w.key, body });
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.error.code, `${m} ${p}`).toBe('room_not_found');
    }
    expect((await call(t, 'GET', '/v1/rooms?limit=200', { key: w.key })).body.data.map((r: any) => r.id)).not.toContain(
      dm,
    );
  });

  it('a member without admin rights cannot rename a room they did not create (403), a non-member cannot see it (404)', async () => {
    const memberKey = await issueKey(t.rt, {
      userId: w.member.id,
      organizationId: w.orgId,
      scopes: ['rooms:read', 'rooms:write'],
    });
    const r = await call(t, 'PATCH', `/v1/rooms/${w.roomId}`, { key: memberKey.token, body: { name: 'mine' } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('forbidden');
    const own = await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'owner only' } });
    expect((await call(t, 'GET', `/v1/rooms/${own.body.id}`, { key: memberKey.token })).status).toBe(404);
  });
});
