import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { NEVER_DELEGATED, SCOPES } from '../../src/domain/scopes.js';
import {
  ALL_SCOPES,
  addRooms,
  call,
  createRoom,
  createWorld,
  issueKey,
  startTestServer,
  type TestServer,
} from '../helpers/harness.js';
import { addConnector, invokeDue, startRun } from '../agents/helpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { post2026, postMcp } from './mcpClient.js';

const ROOM = 'svc://rooms/{roomId}';
const RECORD = 'svc://rooms/{roomId}/records/{recordId}';
const FILE = 'svc://rooms/{roomId}/files/{fileId}';

/** `completion/complete` on 2026-07-28 (raw HTTP): the result, or the JSON-RPC error. */
async function complete(
  t: TestServer,
  token: string,
  uri: string,
  name: string,
  value: string,
  context?: Record<string, string>,
) {
  const r = await post2026(
    t,
    'completion/complete',
    {
      ref: { type: 'ref/resource', uri },
      argument: { name, value },
      ...(context && { context: { arguments: context } }),
    },
    { token },
  );
  expect(r.status).toBe(200);
  return r.body as {
    result?: { completion: { values: string[]; hasMore?: boolean }; _meta: Record<string, any> };
    error?: { code: number; message: string };
  };
}
const values = async (...a: Parameters<typeof complete>) => (await complete(...a)).result!.completion.values;

/** A room of the world's organization made by its owner, with the given members. */
const roomOf = (t: TestServer, w: Awaited<ReturnType<typeof createWorld>>, name: string, memberIds: string[] = []) =>
  t.rt.services.ds.transaction((m) =>
    createRoom(m, t.rt.services.now(), { name, createdById: w.owner.id, organizationId: w.orgId, memberIds }),
  );

describe('MCP completion/complete for the resource templates', () => {
  it("completes roomId to the rooms the caller can read, by name prefix, ids with names, never another organization's", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const ownerOnly = await roomOf(t, w, 'Genesis board');
    const otherRoom = await roomOf(t, other, 'General of Other');

    // the capability is declared on both revisions
    const discover = await post2026(t, 'server/discover', {}, { token: w.key });
    expect(discover.body.result.capabilities).toMatchObject({ completions: {} });

    const all = await complete(t, w.key, ROOM, 'roomId', 'gen');
    expect(all.result).toMatchObject({
      resultType: 'complete',
      completion: { values: [w.roomId, ownerOnly.id], hasMore: false },
    });
    expect(all.result!._meta['svc/names']).toEqual({ [w.roomId]: 'General', [ownerOnly.id]: 'Genesis board' });
    // by id prefix too; the direct-message room and the other organization's rooms never appear
    expect(await values(t, w.key, ROOM, 'roomId', w.roomId.slice(0, 8))).toContain(w.roomId);
    const everything = await values(t, w.key, ROOM, 'roomId', '');
    expect(everything).not.toContain(w.dmRoomId);
    expect(everything).toHaveLength(2);
    // a member sees the rooms they are in, not the owner's other room
    const member = await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES });
    expect(await values(t, member.token, ROOM, 'roomId', '')).toEqual([w.roomId]);
    // the other organization's owner sees only their own
    expect(await values(t, other.key, ROOM, 'roomId', 'gen')).toEqual([other.roomId, otherRoom.id]);
    for (const v of await values(t, other.key, ROOM, 'roomId', ''))
      expect([w.roomId, ownerOnly.id, w.dmRoomId]).not.toContain(v);
    // LIKE's wildcards typed by the caller match themselves
    expect(await values(t, w.key, ROOM, 'roomId', '%')).toEqual([]);
    expect(await values(t, w.key, ROOM, 'roomId', '_')).toEqual([]);
    // the same for the messages template's roomId
    expect(await values(t, w.key, 'svc://rooms/{roomId}/messages', 'roomId', 'Genesis')).toEqual([ownerOnly.id]);
  });

  it('answers at most 20, with hasMore', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await addRooms(t.rt, w, 25);
    const r = await complete(t, w.key, ROOM, 'roomId', 'r');
    expect(r.result!.completion.values).toHaveLength(20);
    expect(r.result!.completion.hasMore).toBe(true);
    expect(Object.keys(r.result!._meta['svc/names'])).toHaveLength(20);
  });

  it('completes record and file ids within a readable room; another room answers as an empty one', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const rec = (
      await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
        key: w.key,
        body: { title: 'Minutes of Monday', body: 'x' },
      })
    ).body;
    await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, { key: w.key, body: { title: 'Budget', body: 'x' } });
    const file = (
      await call(t, 'POST', `/v1/rooms/${w.roomId}/files?filename=notes.txt`, {
        key: w.key,
        body: 'hello',
        headers: { 'content-type': 'text/plain' },
      })
    ).body;

    const r = await complete(t, w.key, RECORD, 'recordId', 'min', { roomId: w.roomId });
    expect(r.result).toMatchObject({
      completion: { values: [rec.id], hasMore: false },
      _meta: { 'svc/names': { [rec.id]: 'Minutes of Monday' } },
    });
    expect(await values(t, w.key, RECORD, 'recordId', '', { roomId: w.roomId })).toHaveLength(2);
    expect(await complete(t, w.key, FILE, 'fileId', 'NOT', { roomId: w.roomId })).toMatchObject({
      result: { completion: { values: [file.id] }, _meta: { 'svc/names': { [file.id]: 'notes.txt' } } },
    });

    // another organization's member, a missing room and a malformed id: the same empty answer, nothing told
    const empty = { completion: { values: [], hasMore: false }, _meta: { 'svc/names': {} } };
    expect((await complete(t, other.key, RECORD, 'recordId', '', { roomId: w.roomId })).result).toMatchObject(empty);
    expect((await complete(t, other.key, FILE, 'fileId', '', { roomId: w.roomId })).result).toMatchObject(empty);
    expect((await complete(t, w.key, RECORD, 'recordId', '', { roomId: 'room_doesnotexist' })).result).toMatchObject(
      empty,
    );
    expect((await complete(t, w.key, RECORD, 'recordId', '', { roomId: '../x%' })).result).toMatchObject(empty);
    // a key without records:read completes nothing
    const noRecords = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ALL_SCOPES.filter((s) => s !== 'records:read'),
    });
    expect(await values(t, noRecords.token, RECORD, 'recordId', '', { roomId: w.roomId })).toEqual([]);

    // counted and audited as a request of the caller, no units
    const rows = (await listAudit(t.rt.services, { limit: 100 })).filter(
      (a) => a.routePattern === 'completion/complete',
    );
    expect(rows.length).toBeGreaterThanOrEqual(8);
    expect(rows.every((a) => a.surface === 'mcp' && a.units === 0 && a.statusCode === 200)).toBe(true);
  });

  it("a delegated agent token completes its run's room only", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const second = await roomOf(t, w, 'General second', [w.member.id]);
    const rec = (
      await call(t, 'POST', `/v1/rooms/${second.id}/records`, {
        key: w.key,
        body: { title: 'Second minutes', body: 'x' },
      })
    ).body;
    await using rx = await startReceiver([{ status: 202 }]);
    const connector = await addConnector(
      t.rt,
      w.orgId,
      rx.url,
      SCOPES.filter((x) => !NEVER_DELEGATED.has(x)),
    );
    const key = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    expect((await startRun(t, key, w.roomId, connector.id)).status).toBe(202);
    await invokeDue(t.rt);
    const token = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;

    expect(await values(t, key, ROOM, 'roomId', 'gen')).toEqual([w.roomId, second.id]);
    expect(await values(t, token, ROOM, 'roomId', 'gen')).toEqual([w.roomId]);
    expect(await values(t, token, ROOM, 'roomId', second.id)).toEqual([]);
    expect(await values(t, token, RECORD, 'recordId', '', { roomId: second.id })).toEqual([]);
    expect(await values(t, key, RECORD, 'recordId', '', { roomId: second.id })).toEqual([rec.id]);
  });

  it('refuses what is not a completion of svc with -32602, never a 500', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const refused = async (params: Record<string, unknown>) => {
      const r = await post2026(t, 'completion/complete', params, { token: w.key });
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({ code: -32602 });
      return r.body.error.message as string;
    };
    expect(
      await refused({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'x', value: '' } }),
    ).toMatch(/no prompts/);
    expect(
      await refused({
        ref: { type: 'ref/resource', uri: 'svc://rooms/{nope}' },
        argument: { name: 'nope', value: '' },
      }),
    ).toMatch(/not a resource template/);
    expect(
      await refused({
        ref: { type: 'ref/resource', uri: 'svc://rooms/room_1' },
        argument: { name: 'roomId', value: '' },
      }),
    ).toMatch(/not a resource template/);
    expect(
      await refused({ ref: { type: 'ref/resource', uri: ROOM }, argument: { name: 'recordId', value: '' } }),
    ).toMatch(/has no argument recordId/);
    expect(
      await refused({ ref: { type: 'ref/resource', uri: RECORD }, argument: { name: 'recordId', value: '' } }),
    ).toMatch(/context\.arguments\.roomId/);
    expect(
      await refused({ ref: { type: 'ref/resource', uri: ROOM }, argument: { name: 'roomId', value: 'x'.repeat(201) } }),
    ).toMatch(/longer than 200/);
    // params not of the spec's shape are refused by the SDK's schema check before svc sees them (its code: -32603)
    for (const params of [
      { ref: { type: 'ref/resource', uri: ROOM }, argument: { name: 'roomId' } },
      { ref: { type: 'ref/resource' }, argument: { name: 'roomId', value: '' } },
    ]) {
      const r = await post2026(t, 'completion/complete', params, { token: w.key });
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({
        code: expect.any(Number),
        message: expect.stringContaining('invalid_type'),
      });
    }
  });

  it('works for 2025 clients (raw) and with the v2 SDK client on both revisions', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const raw = await postMcp(
      t,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'completion/complete',
        params: { ref: { type: 'ref/resource', uri: ROOM }, argument: { name: 'roomId', value: 'Gen' } },
      },
      { token: w.key },
    );
    expect(raw.body.result).toMatchObject({ completion: { values: [w.roomId] } });
    for (const mode of ['auto', undefined] as const) {
      const client = new ClientV2(
        { name: 'svc-test-v2', version: '1.0.0' },
        mode ? { versionNegotiation: { mode } } : undefined,
      );
      await client.connect(
        new TransportV2(new URL(`${t.baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${w.key}` } },
        }),
      );
      try {
        expect(client.getServerCapabilities()?.completions).toEqual({});
        const r = await client.complete({
          ref: { type: 'ref/resource', uri: ROOM },
          argument: { name: 'roomId', value: 'gen' },
        });
        expect(r.completion.values).toEqual([w.roomId]);
        expect(r._meta?.['svc/names']).toEqual({ [w.roomId]: 'General' });
      } finally {
        await client.close();
      }
    }
  });
});
