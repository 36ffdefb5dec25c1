import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { listProcedures } from '../../src/procedures/index.js';
import { isAppOnly } from '../../mcp/apps/catalog.js';
import { ALL_SCOPES, createWorld, issueKey, sharedTestServer } from '../helpers/harness.js';
import { connectMcp, postMcp } from './mcpClient.js';

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

const refs = (node: unknown): string[] =>
  !node || typeof node !== 'object'
    ? []
    : Object.entries(node).flatMap(([k, v]) => (k === '$ref' || k === '$defs' ? [k] : refs(v)));

describe('MCP discovery: initialize and tools/list', () => {
  it('negotiates the protocol version and announces tools, statelessly', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    expect(c.getServerVersion()).toMatchObject({ name: 'svc' });
    expect(c.getServerCapabilities()?.tools).toBeDefined();
    expect(c.getInstructions()).toMatch(/idempotencyKey/);

    const latest = await postMcp(t, initialize(LATEST_PROTOCOL_VERSION), { token: w.key });
    expect(latest.status).toBe(200);
    expect(latest.body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(latest.headers.get('mcp-session-id')).toBeNull();
    const older = await postMcp(t, initialize('2025-03-26'), { token: w.key });
    expect(older.body.result.protocolVersion).toBe('2025-03-26');
    const unknown = await postMcp(t, initialize('1999-01-01'), { token: w.key });
    expect(unknown.body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    // after initialization an unsupported protocol header is refused by the transport
    const bad = await postMcp(
      t,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { token: w.key, headers: { 'mcp-protocol-version': '1999-01-01' } },
    );
    expect(bad.status).toBe(400);
  });

  it('lists a tool for every procedure, with schemas and annotations from its metadata', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    // every scope, agent:invoke included; completing an agent run is listed to the run's own token only (mcp/units)
    const all = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    await using c = await connectMcp(t, { token: all });
    const { tools } = await c.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // (an MCP Apps view's own tool is listed to a client of the extension only: test/mcp/apps.test.ts)
    const procs = listProcedures().filter((p) => !p.meta.restOnly && !p.meta.runOnly && !isAppOnly(p.meta.tool.name));
    expect(new Set(byName.keys())).toEqual(new Set(procs.map((p) => p.meta.tool.name)));
    for (const p of procs) {
      const tool = byName.get(p.meta.tool.name)!;
      expect(tool.title).toBe(p.meta.tool.title);
      expect(tool.description).toBe(p.meta.tool.description ?? p.meta.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(refs(tool.inputSchema)).toEqual([]);
      expect(refs(tool.outputSchema)).toEqual([]);
      // one type a schema: a `type` array is refused by hosts that map tools onto a single-type dialect
      expect(JSON.stringify([tool.inputSchema, tool.outputSchema]), tool.name).not.toMatch(/"type":\[/);
      // every hint stated, none left to a default (hosts warn only on an explicit destructiveHint: true)
      expect(tool.annotations, tool.name).toEqual({
        readOnlyHint: p.meta.kind === 'read',
        destructiveHint: p.meta.kind === 'write' && p.meta.destructive === true,
        idempotentHint: p.meta.kind === 'read' || p.meta.idempotent === true,
        openWorldHint: false,
      });
      expect('idempotencyKey' in (tool.inputSchema.properties ?? {})).toBe(p.meta.kind === 'write');
    }
    expect(byName.get('get_me')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('delete_record')!.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get('create_message')!.annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });

    const listRooms = byName.get('list_rooms')!;
    expect(listRooms.inputSchema.properties).toMatchObject({
      limit: { type: 'integer', minimum: 1, maximum: 200 },
      cursor: { type: 'string' },
    });
    expect(listRooms.outputSchema!.properties).toMatchObject({ data: { type: 'array' } });
    expect(listRooms.outputSchema!.required).toEqual(['data', 'nextCursor']);
    expect(byName.get('get_room')!.inputSchema.required).toEqual(['roomId']);
    expect(byName.get('create_message')!.inputSchema.required).toEqual(['roomId', 'body']);
    expect(byName.get('upload_file')!.inputSchema.properties).toHaveProperty('contentBase64');
  });

  it('describes tools in standard JSON Schema: success-only output schemas, examples, contentEncoding, no vendor keywords', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const { tools } = await c.listTools();
    const keywords = (node: unknown, out = new Set<string>(), named = false): Set<string> => {
      if (Array.isArray(node)) node.forEach((n) => keywords(n, out));
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (!named) out.add(k);
          if (k === 'examples' || k === 'enum' || k === 'const' || k === 'default') continue;
          keywords(v, out, !named && k === 'properties');
        }
      }
      return out;
    };
    for (const tool of tools) {
      const used = [...keywords(tool.inputSchema), ...keywords(tool.outputSchema)];
      expect(
        used.filter((k) => k === 'example' || k.startsWith('x-')),
        tool.name,
      ).toEqual([]);
      // errors are isError results without structuredContent: the output schema is the success shape alone
      expect(tool.outputSchema!.properties ?? {}, tool.name).not.toHaveProperty('error');
      expect(tool.outputSchema, tool.name).not.toHaveProperty('anyOf');
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const upload = byName.get('upload_file')!.inputSchema as any;
    expect(upload.properties.contentBase64).toMatchObject({ type: 'string', contentEncoding: 'base64' });
    expect(upload.properties.contentBase64).not.toHaveProperty('format');
    expect(upload.properties.text).toMatchObject({ type: 'string' });
    expect(upload.oneOf).toEqual([{ required: ['contentBase64'] }, { required: ['text'] }]);
    // compact for a model's context: no examples, and an output names its fields without their scalar types
    expect((byName.get('get_room')!.inputSchema as any).properties.roomId).toEqual({ type: 'string' });
    expect(byName.get('get_file_content')!.outputSchema!.required).toContain('delivery');
    expect(byName.get('search_content')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('shows only the tools whose scope the credential holds', async () => {
    await using t = await sharedTestServer();
    const w = await createWorld(t.rt);
    const narrow = await issueKey(t.rt, {
      userId: w.owner.id,
      organizationId: w.orgId,
      scopes: ['mcp:tools', 'me:read', 'rooms:read'],
    });
    await using c = await connectMcp(t, { token: narrow.token });
    const names = (await c.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['get_me', 'get_room', 'list_room_members', 'list_rooms']);
  });
});
