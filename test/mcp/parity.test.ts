import { describe, expect, it } from 'vitest';
import { listProcedures } from '../../src/procedures/index.js';
import { buildToolCatalog } from '../../mcp/tools/toolCatalog.js';
import { isAppOnly } from '../../mcp/apps/catalog.js';
import { ALL_SCOPES, call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { bodyOf, connectMcp } from './mcpClient.js';

const NOW = new Date('2026-11-22T09:30:00.000Z');
const FAKE = '01KAR3V6X5Q2Z8N4M7P9W1T3YB';
const withoutRequestId = (b: any) => (b?.error ? { error: { ...b.error, requestId: '(id)' } } : b);

describe('REST and MCP parity: one procedure, two surfaces', () => {
  it('has a tool for every REST operation of the OpenAPI document', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const doc = (await call(t, 'GET', '/v1/openapi.json')).body;
    const operations = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((ops) =>
      Object.values(ops),
    );
    expect(operations.length).toBe(listProcedures().length);
    // every scope, agent:invoke included, so no tool is hidden
    const all = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    await using c = await connectMcp(t, { token: all });
    const tools = new Map((await c.listTools()).tools.map((tool) => [tool.name, tool]));
    // (completing an agent run is listed to the run's own delegated token only, an MCP Apps view's own tool to a
    // client of the extension only: those from the catalog)
    const catalog = buildToolCatalog();
    for (const tool of catalog.values())
      if (tool.proc.meta.runOnly || isAppOnly(tool.tool.name)) tools.set(tool.tool.name, tool.tool as never);
    // a stream is REST only (text/event-stream; MCP has subscriptions/listen): the only operations without a tool
    const streams = new Set(listProcedures().flatMap((p) => (p.meta.restOnly ? [p.meta.tool.name] : [])));
    for (const op of operations) {
      if (streams.has(op.operationId)) {
        expect(op['x-mcp-tool'], op.operationId).toBeUndefined();
        expect(Object.keys(op.responses['200'].content), op.operationId).toEqual(['text/event-stream']);
        continue;
      }
      expect(tools.has(op.operationId), op.operationId).toBe(true);
      expect(op['x-mcp-tool']).toBe(op.operationId);
      // the tool's text is written for a model (meta.tool.description) where it differs from the REST description
      const meta = catalog.get(op.operationId)!.proc.meta;
      expect(tools.get(op.operationId)!.description).toBe(meta.tool.description ?? op.description);
    }
    expect(tools.size).toBe(operations.length - streams.size);
  });

  it('answers every read alike on both surfaces, errors included', async () => {
    await using t = await startTestServer({ now: () => NOW });
    const w = await createWorld(t.rt);
    // every scope, agent:invoke included
    w.key = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    const rest = (method: string, path: string, body?: unknown) => call(t, method, path, { key: w.key, body });
    const record = (await rest('POST', `/v1/rooms/${w.roomId}/records`, { title: 'Weekly', body: 'Notes' })).body;
    const task = (await rest('POST', `/v1/rooms/${w.roomId}/tasks`, { title: 'Ship' })).body;
    await rest('POST', `/v1/rooms/${w.roomId}/messages`, { body: 'hello' });
    const file = (
      await call(t, 'POST', `/v1/rooms/${w.roomId}/files?filename=a.txt`, {
        key: w.key,
        body: 'file body',
        headers: { 'content-type': 'text/plain' },
      })
    ).body;
    expect(file.id).toMatch(/^file_/);
    const params: Record<string, string> = { roomId: w.roomId, recordId: record.id, taskId: task.id, fileId: file.id };

    await using c = await connectMcp(t, { token: w.key });
    const compared: string[] = [];
    for (const proc of listProcedures()) {
      const { http, kind, tool } = proc.meta;
      if (kind !== 'read' || http.download || proc.meta.restOnly) continue;
      const names = [...http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      // parameters without a fixture (a webhook, a delivery) still compare: both surfaces answer the same 404
      const input = Object.fromEntries(
        names.map((n) => [n, params[n] ?? `${n.replace(/Id$/, '').slice(0, 4)}_${FAKE}`]),
      );
      const path = http.path.replace(/\{(\w+)\}/g, (_, n: string) => input[n]);
      const viaRest = await rest('GET', path);
      const viaMcp = await c.callTool({ name: tool.name, arguments: input });
      expect(viaMcp.isError === true, tool.name).toBe(viaRest.status >= 400);
      expect(withoutRequestId(bodyOf(viaMcp)), tool.name).toEqual(withoutRequestId(viaRest.body));
      compared.push(tool.name);
    }
    expect(compared).toEqual(
      expect.arrayContaining(['get_me', 'list_rooms', 'get_room', 'get_record', 'list_event_types', 'list_events']),
    );

    // the same page and the same cursor
    const page = await rest('GET', '/v1/rooms?limit=1');
    const mcpPage = await c.callTool({ name: 'list_rooms', arguments: { limit: 1 } });
    expect(mcpPage.structuredContent).toEqual(page.body);
    // a direct-message room is hidden alike
    const dmRest = await rest('GET', `/v1/rooms/${w.dmRoomId}`);
    const dmMcp = await c.callTool({ name: 'get_room', arguments: { roomId: w.dmRoomId } });
    expect(dmRest.status).toBe(404);
    expect(withoutRequestId(bodyOf(dmMcp))).toEqual(withoutRequestId(dmRest.body));
    // the download: bytes over REST, the same content as an embedded text resource over MCP
    const bytes = Buffer.from(
      await (
        await t.fetch(`/v1/rooms/${w.roomId}/files/${file.id}/content`, {
          headers: { authorization: `Bearer ${w.key}` },
        })
      ).arrayBuffer(),
    );
    const content = await c.callTool({ name: 'get_file_content', arguments: { roomId: w.roomId, fileId: file.id } });
    expect((content.content as any)[0].resource.text).toBe(bytes.toString('utf8'));
  });

  it('answers a write alike on both surfaces', async () => {
    await using t = await startTestServer({ now: () => NOW });
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const viaRest = await call(t, 'PATCH', `/v1/rooms/${w.roomId}`, { key: w.key, body: { name: 'Renamed' } });
    const viaMcp = await c.callTool({ name: 'update_room', arguments: { roomId: w.roomId, name: 'Renamed' } });
    expect(viaRest.status).toBe(200);
    expect(viaMcp.structuredContent).toEqual(viaRest.body);
    const badRest = await call(t, 'PATCH', `/v1/rooms/${w.roomId}`, { key: w.key, body: { name: '' } });
    const badMcp = await c.callTool({ name: 'update_room', arguments: { roomId: w.roomId, name: '' } });
    expect(badRest.status).toBe(400);
    expect(withoutRequestId(bodyOf(badMcp))).toEqual(withoutRequestId(badRest.body));
  });
});
