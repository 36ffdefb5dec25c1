import { describe, expect, it } from 'vitest';
import { call, createWorld, issueKey, sharedTestServer, type TestServer, type World } from '../helpers/harness.js';
import { post2026 } from '../mcp/mcpClient.js';

/** A record of the owner's, taken through request → reject, request → withdraw, request → approve. */
async function decidedRecord(t: TestServer, w: World, memberKey: string) {
  const rec = (await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'Q3 plan' } }))
    .body as { id: string };
  const step = async (action: string, key: string, comment?: string) => {
    const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/records/${rec.id}/approval/${action}`, {
      key,
      body: comment === undefined ? {} : { comment },
    });
    expect(r.status, `${action}: ${JSON.stringify(r.body)}`).toBe(200);
  };
  await step('request', w.key, 'Please review');
  await step('reject', memberKey, 'Section 2 is wrong');
  await step('request', w.key);
  await step('withdraw', w.key);
  await step('request', w.key, 'Fixed');
  await step('approve', memberKey, 'Looks right');
  return rec.id;
}

const approvalsPath = (w: World, recordId: string, roomId = w.roomId) =>
  `/v1/rooms/${roomId}/records/${recordId}/approvals`;

describe('GET /v1/rooms/{roomId}/records/{recordId}/approvals (list_record_approvals)', () => {
  it('lists every request oldest first: who asked, who decided, the decision and the comment', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const memberKey = (
      await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['records:write', 'records:read'] })
    ).token;
    const id = await decidedRecord(t, w, memberKey);

    const r = await call(t, 'GET', approvalsPath(w, id), { key: w.key });
    expect(r.status).toBe(200);
    expect(r.body.nextCursor).toBeNull();
    expect(r.body.data).toMatchObject([
      {
        recordId: id,
        status: 'rejected',
        requestedById: w.owner.id,
        decidedById: w.member.id,
        comment: 'Section 2 is wrong',
      },
      { recordId: id, status: 'withdrawn', requestedById: w.owner.id, decidedById: w.owner.id, comment: null },
      { recordId: id, status: 'approved', requestedById: w.owner.id, decidedById: w.member.id, comment: 'Looks right' },
    ]);
    for (const a of r.body.data) {
      expect(a.id).toMatch(/^apr_/);
      expect(Date.parse(a.decidedAt)).toBeGreaterThanOrEqual(Date.parse(a.createdAt));
    }
    // a pending request is listed as pending, undecided
    await call(t, 'POST', `/v1/rooms/${w.roomId}/records/${id}/approval/request`, { key: memberKey, body: {} });
    const pending = (await call(t, 'GET', approvalsPath(w, id), { key: w.key })).body.data.at(-1);
    expect(pending).toMatchObject({
      status: 'pending',
      requestedById: w.member.id,
      decidedById: null,
      decidedAt: null,
    });
    // a record never sent for approval has none
    const fresh = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'New' } });
    expect((await call(t, 'GET', approvalsPath(w, fresh.body.id), { key: w.key })).body).toEqual({
      data: [],
      nextCursor: null,
    });

    // the same rows as MCP's tool of the same name
    const tool = await post2026(
      t,
      'tools/call',
      { name: 'list_record_approvals', arguments: { roomId: w.roomId, recordId: id } },
      { token: w.key },
    );
    expect(tool.body.result.structuredContent).toEqual(
      (await call(t, 'GET', approvalsPath(w, id), { key: w.key })).body,
    );
  });

  it('pages with limit and cursor, and refuses a forged cursor', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const memberKey = (
      await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['records:write'] })
    ).token;
    const id = await decidedRecord(t, w, memberKey);
    const first = await call(t, 'GET', `${approvalsPath(w, id)}?limit=2`, { key: w.key });
    expect(first.body.data.map((a: any) => a.status)).toEqual(['rejected', 'withdrawn']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(
      t,
      'GET',
      `${approvalsPath(w, id)}?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { key: w.key },
    );
    expect(second.body.data.map((a: any) => a.status)).toEqual(['approved']);
    expect(second.body.nextCursor).toBeNull();
    const bad = await call(t, 'GET', `${approvalsPath(w, id)}?cursor=abc`, { key: w.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    const limit = await call(t, 'GET', `${approvalsPath(w, id)}?limit=201`, { key: w.key });
    expect(limit.status).toBe(400);
  });

  it("404 for another organization's record, another room or an unknown id; 403 without records:read", async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const memberKey = (
      await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ['records:write'] })
    ).token;
    const id = await decidedRecord(t, w, memberKey);

    const foreign = await call(t, 'GET', approvalsPath(w, id), { key: other.key });
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain('Looks right');
    // the record exists, but not in the room named (another room of the caller's)
    const room = (await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'Second' } })).body.id as string;
    const elsewhere = await call(t, 'GET', approvalsPath(w, id, room), { key: w.key });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.code).toBe('not_found');
    expect(JSON.stringify(elsewhere.body)).not.toContain('Looks right');
    const unknown = await call(t, 'GET', approvalsPath(w, 'rec_01KAR3V6X5Q2Z8N4M7P9W1T3YB'), { key: w.key });
    expect(unknown.status).toBe(404);
    // a key that may write records but not read them
    const scoped = await call(t, 'GET', approvalsPath(w, id), { key: memberKey });
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe('insufficient_scope');
  });
});
