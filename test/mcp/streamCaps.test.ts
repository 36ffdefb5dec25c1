import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { RIGHTS_BACKSTOP_MS } from '../../mcp/subscriptions/listen.js';
import { ALL_SCOPES, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { openListen, type ListenStream } from './listenStream.js';
import { personToken } from './personToken.js';

const ACK = 'notifications/subscriptions/acknowledged';
const messagesOf = (roomId: string) => `svc://rooms/${roomId}/messages`;

/** A stream that was acknowledged (it fails the test otherwise). */
async function opened(t: TestServer, token: string, roomId: string): Promise<ListenStream> {
  const s = await openListen(t, { resourceSubscriptions: [messagesOf(roomId)] }, { token });
  expect(s.error).toBeUndefined();
  expect((await s.nextMessage()).method).toBe(ACK);
  return s;
}

/** Opens streams until one is acknowledged: the server frees a closed stream's slot once it sees the client go. */
async function openedOnceFree(t: TestServer, token: string, roomId: string): Promise<ListenStream> {
  for (let i = 0; i < 500; i++) {
    const s = await openListen(t, { resourceSubscriptions: [messagesOf(roomId)] }, { token });
    if (!s.error) {
      expect((await s.nextMessage()).method).toBe(ACK);
      return s;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no slot came free');
}

describe('MCP subscription streams: what one person and one organization may hold', () => {
  it('caps the streams of one person over all their keys (SVC_MCP_MAX_STREAMS_PER_USER)', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS_PER_USER: '2' } });
    const w = await createWorld(t.rt);
    const keys = [w.key];
    for (let i = 0; i < 3; i++)
      keys.push((await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ALL_SCOPES })).token);
    const first = await opened(t, keys[0], w.roomId);
    const second = await opened(t, keys[1], w.roomId);
    for (const key of keys.slice(2)) {
      const refused = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: key, id: 5 });
      expect(refused.error).toMatchObject({ code: -32603, data: { maxStreams: 2, per: 'user' } });
      expect(refused.error!.message).toBe('Subscription limit reached: 2 open streams a person');
    }
    // another person of the organization has slots of their own
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const theirs = await opened(t, member.token, w.roomId);
    // a stream that ends gives the person's slot back, to any of their keys
    first.close();
    const again = await openedOnceFree(t, keys[3], w.roomId);
    for (const s of [second, theirs, again]) s.close();
  });

  it('caps the streams of one organization (SVC_MCP_MAX_STREAMS_PER_ORG), another organization apart', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS_PER_ORG: '2' } });
    const w = await createWorld(t.rt);
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const a = await opened(t, w.key, w.roomId);
    const b = await opened(t, member.token, w.roomId);
    const refused = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: w.key });
    expect(refused.error).toMatchObject({ code: -32603, data: { maxStreams: 2, per: 'organization' } });
    expect(refused.error!.message).toBe('Subscription limit reached: 2 open streams an organization');
    const other = await createWorld(t.rt, 'Othercorp');
    const c = await opened(t, other.key, other.roomId);
    for (const s of [a, b, c]) s.close();
  });

  it("counts another process's streams of the same person and organization, until their leases expire", async () => {
    await using t = await startTestServer({
      env: { SVC_MCP_MAX_STREAMS_PER_USER: '1', SVC_MCP_MAX_STREAMS_PER_ORG: '2' },
    });
    const w = await createWorld(t.rt);
    const insert =
      'INSERT INTO "mcp_stream_leases" ("id", "credential", "userId", "organizationId", "expiresAt") VALUES (?, ?, ?, ?, ?)';
    const later = new Date(Date.now() + 60_000).toISOString();
    const earlier = new Date(Date.now() - 60_000).toISOString();
    // another process holds a live stream of the owner through another key, and once held one of the member
    await sql(t.rt.services.ds, insert, ['lease_elsewhere_owner', 'api_key:key_elsewhere', w.owner.id, w.orgId, later]);
    await sql(t.rt.services.ds, insert, ['lease_elsewhere_dead', 'api_key:key_gone', w.member.id, w.orgId, earlier]);
    const mine = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: w.key });
    expect(mine.error).toMatchObject({ data: { maxStreams: 1, per: 'user' } });
    // the member's expired lease does not count: the member opens the organization's second stream
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const theirs = await opened(t, member.token, w.roomId);
    const third = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    const refused = await openListen(t, { resourceSubscriptions: [messagesOf(w.roomId)] }, { token: third.token });
    expect(refused.error).toMatchObject({ data: { per: 'user' } });
    await sql(t.rt.services.ds, 'DELETE FROM "mcp_stream_leases" WHERE "id" = ?', ['lease_elsewhere_owner']);
    const now = await opened(t, w.key, w.roomId);
    for (const s of [theirs, now]) s.close();
  });
});

describe('MCP subscription streams: rights checked when what they rest on changes', () => {
  it('does not authenticate open streams again while nothing changes, and ends one whose token expires', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS: '20' } });
    const w = await createWorld(t.rt);
    const s_ = t.rt.services;
    const { token, tokenId } = await personToken(t, w, ALL_SCOPES);
    const streams = [];
    for (let i = 0; i < 10; i++) streams.push(await opened(t, token, w.roomId));
    // every authentication of an access token goes through the runtime's resolver: count them from here on
    const resolve = s_.resolveAccessToken!;
    let resolved = 0;
    s_.resolveAccessToken = (s, tok) => {
      resolved++;
      return resolve(s, tok);
    };
    const started = Date.now();
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      // at most the backstop's own check of each stream, once a RIGHTS_BACKSTOP_MS that passed
      const allowed = streams.length * Math.floor((Date.now() - started) / RIGHTS_BACKSTOP_MS);
      expect(resolved).toBeLessThanOrEqual(allowed);

      // the token expires: every stream of it ends, gracefully
      await sql(s_.ds, 'UPDATE "oauth_tokens" SET "expiresAt" = ? WHERE "id" = ?', [
        new Date(Date.now() - 1000).toISOString(),
        tokenId,
      ]);
      for (const s of streams) {
        expect((await s.nextMessage()).result).toMatchObject({ resultType: 'complete' });
        expect(await s.nextMessage()).toBeNull();
      }
    } finally {
      s_.resolveAccessToken = resolve;
    }
  });

  it("ends an organization admin's stream of a room they are no member of when they are made a plain member", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // the owner reads a room of the organization they are not a member of, as its admin
    const room = (await sql<{ id: string }>(t.rt.services.ds, 'SELECT "id" FROM "rooms" WHERE "id" = ?', [w.roomId]))
      .rows[0];
    await sql(t.rt.services.ds, 'DELETE FROM "room_members" WHERE "roomId" = ? AND "userId" = ?', [
      room.id,
      w.owner.id,
    ]);
    const s = await opened(t, w.key, w.roomId);
    await sql(t.rt.services.ds, 'UPDATE "memberships" SET "role" = ? WHERE "userId" = ? AND "organizationId" = ?', [
      'member',
      w.owner.id,
      w.orgId,
    ]);
    expect((await s.nextMessage()).result).toMatchObject({ resultType: 'complete' });
    expect(await s.nextMessage()).toBeNull();
  });
});
