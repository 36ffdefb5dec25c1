import { describe, expect, it } from 'vitest';
import { toToolSchema } from '../../mcp/tools/toolSchema.js';
import { listProcedures } from '../../src/procedures/index.js';
import { ALL_SCOPES, call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { addConnector, INVOKER_SCOPES, startRun } from '../agents/helpers.js';
import { mintDelegatedToken } from '../../src/agents/delegatedToken.js';
import { AgentRun } from '../../db/entities/index.js';
import { inTransaction } from '../../db/transaction.js';
import { connectMcp } from './mcpClient.js';

type Schema = { properties?: Record<string, Schema>; items?: Schema; pattern?: string; anyOf?: Schema[] };

/** The id prefix a schema's pattern names (`^room_[0-9A-Za-z]…`, `^(whd_…|uuid)$`: `room`, `whd`). */
const prefixOf = (s: Schema | undefined): string | undefined =>
  /^\^\(?([a-z]+)_/.exec(s?.pattern ?? s?.anyOf?.find((a) => a.pattern)?.pattern ?? '')?.[1];

/** Every `…Id` field of an input schema, at any depth, with the prefix of the id it takes. */
function idFields(s: Schema, at = ''): { field: string; prefix: string }[] {
  return Object.entries(s.properties ?? {}).flatMap(([name, p]) => {
    const prefix = /Id$/.test(name) ? prefixOf(p) : undefined;
    return [...(prefix ? [{ field: `${at}${name}`, prefix }] : []), ...idFields(p, `${at}${name}.`)];
  });
}

describe('every id a tool asks for can be found with a list tool of its kind', () => {
  it('each …Id argument has a list_… tool whose items carry that id, asking no id of that kind itself', () => {
    const procs = listProcedures().filter((p) => !p.meta.restOnly);
    // the list tools, by the prefix of the ids their items carry (`id`; a user list: its `userId`)
    const lists = new Map<string, string[]>();
    for (const p of procs) {
      if (!p.meta.tool.name.startsWith('list_')) continue;
      const item = (toToolSchema(p.output, 'output', { compact: false }) as Schema).properties?.data?.items;
      const asks = new Set(idFields(toToolSchema(p.input, 'input', { compact: false }) as Schema).map((f) => f.prefix));
      for (const prefix of [prefixOf(item?.properties?.id), prefixOf(item?.properties?.userId)])
        if (prefix && !asks.has(prefix)) lists.set(prefix, [...(lists.get(prefix) ?? []), p.meta.tool.name]);
    }
    const missing = procs.flatMap((p) =>
      idFields(toToolSchema(p.input, 'input', { compact: false }) as Schema)
        .filter((f) => !lists.has(f.prefix))
        .map((f) => `${p.meta.tool.name}.${f.field} (${f.prefix}_…)`),
    );
    expect(missing).toEqual([]);
    expect(lists.get('acn')).toEqual(['list_connectors']);
    expect(lists.get('file')).toEqual(['list_files']);
    expect(lists.get('whd')).toEqual(['list_webhook_deliveries']);
    expect(lists.get('usr')).toEqual(['list_organization_members', 'list_room_members']);
  });

  it("list_connectors: the organization's connectors, paged, without URL or secret, over REST and MCP", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Globex');
    const a = await addConnector(t.rt, w.orgId, 'https://agents.example.com/a');
    const b = await addConnector(t.rt, w.orgId, 'https://agents.example.com/b', ['mcp:tools', 'tasks:read']);
    await addConnector(t.rt, other.orgId, 'https://agents.example.com/other');
    const key = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: INVOKER_SCOPES })).token;

    const first = await call(t, 'GET', '/v1/connectors?limit=1', { key });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([
      { id: a.id, name: 'Lines to tasks', active: true, scopes: expect.any(Array), createdAt: expect.any(String) },
    ]);
    const second = await call(t, 'GET', `/v1/connectors?limit=1&cursor=${first.body.nextCursor}`, { key });
    expect(second.body).toMatchObject({ data: [{ id: b.id, scopes: ['mcp:tools', 'tasks:read'] }], nextCursor: null });

    await using c = await connectMcp(t, { token: key });
    const listed = await c.callTool({ name: 'list_connectors', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as { data: { id: string }[] }).data.map((x) => x.id)).toEqual([a.id, b.id]);
    const wire = JSON.stringify(listed);
    expect(wire).not.toContain('agents.example.com');
    expect(wire).not.toContain(a.secret);
    expect(wire).not.toMatch(/whsec_/);

    // the scope of its siblings (agent:invoke): a key without it neither sees nor calls it
    const plain = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES })).token;
    expect((await call(t, 'GET', '/v1/connectors', { key: plain })).status).toBe(403);
    await using p = await connectMcp(t, { token: plain });
    expect((await p.listTools()).tools.map((x) => x.name)).not.toContain('list_connectors');
    // the individual context has no connectors
    const solo = (await issueKey(t.rt, { userId: w.member.id, organizationId: null, scopes: INVOKER_SCOPES })).token;
    expect((await call(t, 'GET', '/v1/connectors', { key: solo })).body).toEqual({ data: [], nextCursor: null });
  });

  it('list_files: the files of a room the caller can read, over REST and MCP', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Globex');
    const upload = async (roomId: string, key: string, filename: string) =>
      (
        await call(t, 'POST', `/v1/rooms/${roomId}/files?filename=${filename}`, {
          key,
          body: 'hello',
          headers: { 'content-type': 'text/plain' },
        })
      ).body as { id: string };
    const f1 = await upload(w.roomId, w.key, 'a.txt');
    const f2 = await upload(w.roomId, w.key, 'b.txt');
    await upload(other.roomId, other.key, 'theirs.txt');

    const rest = await call(t, 'GET', `/v1/rooms/${w.roomId}/files?limit=1`, { key: w.key });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toMatchObject([{ id: f1.id, filename: 'a.txt', roomId: w.roomId }]);
    expect(rest.body.nextCursor).toEqual(expect.any(String));

    await using c = await connectMcp(t, { token: w.key });
    const listed = await c.callTool({ name: 'list_files', arguments: { roomId: w.roomId } });
    expect((listed.structuredContent as { data: { id: string }[] }).data.map((x) => x.id)).toEqual([f1.id, f2.id]);
    // another organization's room is not found (not_found or room_not_found), as for get_file
    const theirs = await c.callTool({ name: 'list_files', arguments: { roomId: other.roomId } });
    expect(theirs.isError).toBe(true);
    expect(JSON.parse((theirs.content as { text: string }[])[0].text).error.code).toMatch(/not_found$/);
  });

  it("list_organization_members: the acting organization's members with names, for add_room_member", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Globex');
    const rest = await call(t, 'GET', `/v1/organizations/${w.orgId}/members`, { key: w.key });
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((x: { userId: string }) => x.userId)).toEqual([w.owner.id, w.member.id]);
    expect(rest.body.data[0]).toEqual({
      userId: w.owner.id,
      name: expect.any(String),
      role: 'owner',
      joinedAt: expect.any(String),
    });
    // another organization is not found, with any credential of this one
    expect((await call(t, 'GET', `/v1/organizations/${other.orgId}/members`, { key: w.key })).body.error.code).toBe(
      'not_found',
    );
    await using c = await connectMcp(t, { token: w.key });
    const listed = await c.callTool({ name: 'list_organization_members', arguments: { organizationId: w.orgId } });
    expect((listed.structuredContent as { data: { userId: string }[] }).data).toHaveLength(2);
    const theirs = await c.callTool({ name: 'list_organization_members', arguments: { organizationId: other.orgId } });
    expect(theirs.isError).toBe(true);

    // an agent run's delegated token: only the members of its run's room (a new room holds its creator alone)
    const connector = await addConnector(t.rt, w.orgId, 'https://agents.example.com/run', [
      'mcp:tools',
      'organizations:read',
    ]);
    const invoker = (await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: INVOKER_SCOPES }))
      .token;
    const solo = (await call(t, 'POST', '/v1/rooms', { key: invoker, body: { name: 'Solo' } })).body as { id: string };
    const started = await startRun(t, invoker, solo.id, connector.id);
    expect(started.status).toBe(202);
    const s = t.rt.services;
    const token = await inTransaction(
      s,
      async (m) =>
        (
          await mintDelegatedToken(
            m,
            s.now(),
            s.config.baseUrl,
            await m.findOneByOrFail(AgentRun, { id: started.body.id }),
          )
        ).accessToken,
    );
    await using agent = await connectMcp(t, { token });
    const seen = await agent.callTool({ name: 'list_organization_members', arguments: { organizationId: w.orgId } });
    expect((seen.structuredContent as { data: { userId: string }[] }).data.map((x) => x.userId)).toEqual([w.owner.id]);
  });
});
