import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { ALL_SCOPES, addToRoom, call, createRoom, createWorld, issueKey, startTestServer } from '../helpers/harness.js';

/** The ids of the objects of the events a key reads, every page followed (limit 2, so paging is exercised too). */
async function eventObjects(t: Parameters<typeof call>[0], key: string, query = ''): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await call(
      t,
      'GET',
      `/v1/events?limit=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key },
    );
    expect(r.status).toBe(200);
    ids.push(...r.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id));
    cursor = r.body.nextCursor;
  } while (cursor);
  return ids;
}

describe('GET /v1/events shows the events of the rooms the caller can read (access.ts rules)', () => {
  it('owner: every room of the organization; member: their rooms; another organization and personal keys: their own', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    const other = await createWorld(t.rt, 'Other');
    const memberKey = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES }))
      .token;
    const personalKey = (await issueKey(t.rt, { userId: w.owner.id, organizationId: null, scopes: ALL_SCOPES })).token;
    // a room of the organization the member is not in, a personal room of the owner with the member in it
    const ownersOnly = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Owners', createdById: w.owner.id, organizationId: w.orgId }),
    );
    const personal = await s.ds.transaction((m) =>
      createRoom(m, s.now(), { name: 'Mine', createdById: w.owner.id, organizationId: null }),
    );
    await addToRoom(t.rt, personal.id, w.member.id);
    const post = async (key: string, roomId: string) =>
      (await call(t, 'POST', `/v1/rooms/${roomId}/messages`, { key, body: { body: 'hi' } })).body.id as string;
    const inGeneral = await post(w.key, w.roomId);
    const inOwnersOnly = await post(w.key, ownersOnly.id);
    const inPersonal = await post(personalKey, personal.id);
    const inOther = await post(other.key, other.roomId);

    const owner = await eventObjects(t, w.key);
    expect(owner).toEqual(expect.arrayContaining([inGeneral, inOwnersOnly]));
    expect(owner).not.toContain(inPersonal);
    expect(owner).not.toContain(inOther);

    const member = await eventObjects(t, memberKey);
    expect(member).toContain(inGeneral);
    expect(member).not.toContain(inOwnersOnly);
    expect(member).not.toContain(inPersonal);

    expect(await eventObjects(t, personalKey)).toEqual([inPersonal]);
    expect(await eventObjects(t, other.key, '&type=message.created')).toEqual([inOther]);
    // filters narrow within what may be read, never beyond it
    expect(await eventObjects(t, memberKey, `&roomId=${ownersOnly.id}`)).toEqual([]);
    expect(await eventObjects(t, w.key, `&roomId=${ownersOnly.id}&type=message.created`)).toEqual([inOwnersOnly]);
    // a member who left the organization reads nothing of it
    await sql(s.ds, 'DELETE FROM "memberships" WHERE "userId" = ? AND "organizationId" = ?', [w.member.id, w.orgId]);
    expect((await call(t, 'GET', '/v1/events', { key: memberKey })).status).toBe(401);
  });
});
