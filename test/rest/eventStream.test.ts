import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry } from '../../db/entities/index.js';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { call, createWorld, issueKey, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { waitFor } from '../webhooks/processes.js';

// GET /v1/events/stream: the event log as server-sent events. One unit and one audit row when it opens, nothing
// while it waits or for what it brings; resumes after Last-Event-ID; only the caller's rooms; a cap per
// credential; ends when its key is revoked.

interface Stream {
  status: number;
  headers: Headers;
  body: any;
  events: { id: string; data: any }[];
  ended: boolean;
  close(): void;
}

/** Opens the stream and keeps reading it in the background (its events collect in `events`). */
async function openStream(
  t: TestServer,
  key: string,
  query = '',
  headers: Record<string, string> = {},
): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${t.baseUrl}/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: ac.signal,
  });
  const s: Stream = {
    status: res.status,
    headers: res.headers,
    body: null,
    events: [],
    ended: false,
    close: () => ac.abort(),
  };
  if (res.status !== 200) {
    s.body = await res.json();
    return s;
  }
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of res.body!) {
        buffer += Buffer.from(chunk).toString('utf8');
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const id = /^id: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (id && data) s.events.push({ id, data: JSON.parse(data) });
        }
      }
    } catch {
      /* aborted */
    }
    s.ended = true;
  })();
  return s;
}

const post = (t: TestServer, key: string, roomId: string, body: string) =>
  call(t, 'POST', `/v1/rooms/${roomId}/messages`, { key, body: { body } });

describe('GET /v1/events/stream', () => {
  let t: TestServer;
  let w: World;
  let other: World;
  beforeAll(async () => {
    t = await startTestServer({ env: { SVC_MCP_MAX_STREAMS: '2' } });
    w = await createWorld(t.rt);
    other = await createWorld(t.rt, 'other');
  });
  afterAll(() => t.close());

  const streamRows = (keyId: string) =>
    t.rt.ds.getRepository(AuditEntry).find({ where: { apiKeyId: keyId, routePattern: '/v1/events/stream' } });

  it("streams the caller's events as they are committed, for one unit and one audit row however long it waits", async () => {
    const key = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['events:read', 'messages:write'],
    });
    const s = await openStream(t, key.token);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.headers.get('svc-api-units-cost')).toBe('1');
    await waitFor(async () => (await streamRows(key.id)).length === 1, 'the audit row of the opening');
    for (const text of ['one', 'two', 'three']) expect((await post(t, key.token, w.roomId, text)).status).toBe(201);
    // another organization's event: never on this stream
    expect((await post(t, other.key, other.roomId, 'elsewhere')).status).toBe(201);
    await waitFor(() => s.events.length >= 3, 'three events on the stream');
    const log = (await call(t, 'GET', `/v1/events?roomId=${w.roomId}`, { key: w.key })).body.data;
    expect(s.events.map((e) => e.data)).toEqual(log.slice(-3));
    expect(s.events.map((e) => e.id)).toEqual(log.slice(-3).map((e: any) => e.id));
    s.close();
    await waitFor(() => s.ended, 'the stream to end');
    const rows = await streamRows(key.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ statusCode: 200, units: 1, method: 'GET' });
  });

  it('resumes after Last-Event-ID: what came meanwhile, after a few seconds served again that a client skips by id', async () => {
    const first = await openStream(t, w.key, `?roomId=${w.roomId}`);
    const before = (await post(t, w.key, w.roomId, 'before')).body.id as string;
    // (the stream may also carry an earlier test's last event, committed in the millisecond it opened at)
    const isBefore = (e: { data: any }) => JSON.stringify(e.data).includes(before);
    await waitFor(() => first.events.some(isBefore), 'the first event');
    const last = first.events.find(isBefore)!;
    first.close();
    await post(t, w.key, w.roomId, 'while away 1');
    await post(t, w.key, w.roomId, 'while away 2');
    const resumed = await openStream(t, w.key, `?roomId=${w.roomId}`, { 'last-event-id': last.id });
    expect(resumed.status).toBe(200);
    const log = (await call(t, 'GET', `/v1/events?roomId=${w.roomId}`, { key: w.key })).body.data as any[];
    const missed = log.slice(log.findIndex((e) => e.id === last.id) + 1).map((e) => e.id);
    expect(missed).toHaveLength(2);
    await waitFor(() => missed.every((id) => resumed.events.some((e) => e.id === id)), 'the missed events');
    const ids = resumed.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(ids.indexOf(missed[0]))).toEqual(missed);
    resumed.close();
  });

  it('refuses what it cannot serve in the envelope: an unknown event, a room not readable, since too old', async () => {
    const unknown = await openStream(t, w.key, '', { 'last-event-id': 'evt_AAAAAAAAAAAAAAAAAAAAAA' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
    // an event of another organization is unknown to this caller
    const foreign = (await call(t, 'GET', '/v1/events', { key: other.key })).body.data[0];
    const cross = await openStream(t, w.key, `?lastEventId=${foreign.id}`);
    expect([cross.status, cross.body.error.code]).toEqual([404, 'not_found']);
    const room = await openStream(t, w.key, `?roomId=${other.roomId}`);
    expect(room.status).toBe(404);
    const old = await openStream(t, w.key, `?since=${new Date(Date.now() - 2 * 3600_000).toISOString()}`);
    expect([old.status, old.body.error.code]).toEqual([400, 'rule_violation']);
    const narrow = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['messages:read'] });
    const scope = await openStream(t, narrow.token);
    expect([scope.status, scope.body.error.code]).toEqual([403, 'insufficient_scope']);
  });

  it('since: starts at a time within the last hour', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    await post(t, w.key, w.roomId, 'just now');
    const s = await openStream(t, w.key, `?roomId=${w.roomId}&since=${encodeURIComponent(before)}`);
    await waitFor(() => s.events.some((e) => e.data.createdAt >= before), 'the event since then');
    s.close();
  });

  it('holds at most SVC_MCP_MAX_STREAMS streams a credential (429), and a slot frees when a stream ends', async () => {
    const key = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['events:read'] });
    const a = await openStream(t, key.token);
    const b = await openStream(t, key.token);
    expect([a.status, b.status]).toEqual([200, 200]);
    const c = await openStream(t, key.token);
    expect([c.status, c.body.error.code]).toEqual([429, 'rate_limited']);
    expect(c.body.error.details).toEqual({ maxStreams: 2, per: 'credential' });
    a.close();
    await waitFor(
      async () => (await openStream(t, key.token).then((d) => (d.close(), d.status))) === 200,
      'a free slot',
    );
    b.close();
  });

  it('ends the stream when its key is revoked', async () => {
    const key = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['events:read'] });
    const s = await openStream(t, key.token);
    expect(s.status).toBe(200);
    await t.rt.ds.transaction((m) => revokeApiKey(m, new Date(), key.id));
    await waitFor(() => s.ended, 'the stream of a revoked key to end', 60_000);
  });
});
