import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { bodyOf, connectMcp, postMcp, toolCall } from './mcpClient.js';

describe('MCP tools/call through the procedure pipeline', () => {
  it('answers with structuredContent and the same JSON as text', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const me = await c.callTool({ name: 'get_me', arguments: {} });
    expect(me.isError).toBeFalsy();
    expect(me.structuredContent).toMatchObject({
      id: w.owner.id,
      organizationId: w.orgId,
      billingContext: 'organization',
    });
    expect(JSON.parse((me.content as { text: string }[])[0].text)).toEqual(me.structuredContent);
    expect(me._meta?.['svc/requestId']).toMatch(/^req_/);
  });

  it('pages list tools with limit and cursor', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    for (const name of ['R1', 'R2', 'R3']) {
      const r = await c.callTool({ name: 'create_room', arguments: { name } });
      expect(r.isError).toBeFalsy();
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.callTool({ name: 'list_rooms', arguments: { limit: 2, ...(cursor ? { cursor } : {}) } });
      const body = page.structuredContent as { data: { name: string }[]; nextCursor: string | null };
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((room) => room.name));
      cursor = body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['General', 'R1', 'R2', 'R3']);
    const bad = await c.callTool({ name: 'list_rooms', arguments: { limit: 0 } });
    expect(bad.isError).toBe(true);
    expect(bodyOf(bad).error.code).toBe('validation_error');
  });

  it('replays a write with the same idempotencyKey: one side effect', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const args = { roomId: w.roomId, body: 'Hello from an agent', idempotencyKey: 'agent-msg-1' };
    const first = await c.callTool({ name: 'create_message', arguments: args });
    const again = await c.callTool({ name: 'create_message', arguments: args });
    expect(first.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    // the replay says so in _meta (REST: Idempotent-Replayed), the first call does not
    expect(first._meta?.['svc/idempotentReplayed']).toBeUndefined();
    expect(again._meta?.['svc/idempotentReplayed']).toBe(true);
    const list = await c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId } });
    expect((list.structuredContent as { data: unknown[] }).data).toHaveLength(1);
    const reused = await c.callTool({ name: 'create_message', arguments: { ...args, body: 'Something else' } });
    expect(reused.isError).toBe(true);
    expect(bodyOf(reused).error.code).toBe('idempotency_key_reused');
    // reads take no idempotency key: it is an unknown argument there
    const readWithKey = await c.callTool({ name: 'get_me', arguments: { idempotencyKey: 'x' } });
    expect(bodyOf(readWithKey).error.code).toBe('validation_error');
  });

  it('returns domain errors as isError results carrying the REST envelope as text, without structuredContent', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const dm = await c.callTool({ name: 'get_room', arguments: { roomId: w.dmRoomId } });
    expect(dm.isError).toBe(true);
    // the outputSchema describes success only, so an error carries no structuredContent for clients to validate
    expect(dm.structuredContent).toBeUndefined();
    const env = JSON.parse((dm.content as { text: string }[])[0].text);
    expect(env).toEqual({
      error: {
        code: 'room_not_found',
        message: 'Room not found',
        requestId: expect.stringMatching(/^req_/),
        details: {},
      },
    });
    expect(env.error.requestId).toBe(dm._meta?.['svc/requestId']);
    const dmMessages = await c.callTool({ name: 'create_message', arguments: { roomId: w.dmRoomId, body: 'hi' } });
    expect(bodyOf(dmMessages).error.code).toBe('room_not_found');
    const missing = await c.callTool({
      name: 'get_record',
      arguments: { roomId: w.roomId, recordId: 'rec_01KAR3V6X5Q2Z8N4M7P9W1T3YB' },
    });
    expect(bodyOf(missing).error.code).toBe('not_found');
    // invalid arguments: a tool execution error (MCP 2025-11-25, SEP-1303) whose message lists the problems
    const invalid = await c.callTool({ name: 'get_room', arguments: { roomId: 'nope', extra: 1 } });
    expect(invalid.isError).toBe(true);
    expect(bodyOf(invalid).error).toMatchObject({ code: 'validation_error', details: { issues: expect.any(Array) } });
    expect(bodyOf(invalid).error.message).toMatch(/^Invalid input: /);
    expect(bodyOf(invalid).error.message).toContain('roomId: must be a room_ identifier');
    expect(bodyOf(invalid).error.message).toMatch(/extra/);
    // an unknown tool is a JSON-RPC -32602 whose message is prefixed once, by the client
    const unknown = await c
      .callTool({ name: 'no_such_tool', arguments: {} })
      .catch((e: Error & { code?: number }) => e);
    expect(unknown).toMatchObject({ code: -32602, message: 'MCP error -32602: Unknown tool: no_such_tool' });
  });

  it('uploads base64 or text; downloads binary as a resource link, text as an embedded resource, images as image blocks', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const upload = async (args: Record<string, unknown>) => {
      const r = await c.callTool({ name: 'upload_file', arguments: { roomId: w.roomId, ...args } });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      return r.structuredContent as { id: string; size: number; contentType: string };
    };
    const get = (fileId: string) => c.callTool({ name: 'get_file_content', arguments: { roomId: w.roomId, fileId } });

    const bytes = Buffer.from('minutes\u0001\u00ff binary', 'latin1');
    const bin = await upload({
      filename: 'notes.bin',
      contentType: 'application/octet-stream',
      contentBase64: bytes.toString('base64'),
    });
    expect(bin.size).toBe(bytes.length);
    const binDown = await get(bin.id);
    expect(binDown.structuredContent).toMatchObject({
      file: { id: bin.id },
      delivery: 'link',
      resourceUri: `svc://rooms/${w.roomId}/files/${bin.id}`,
      downloadUrl: `${t.baseUrl}/v1/rooms/${w.roomId}/files/${bin.id}/content`,
    });
    expect(binDown.content).toEqual([
      {
        type: 'resource_link',
        uri: `svc://rooms/${w.roomId}/files/${bin.id}`,
        name: 'notes.bin',
        title: 'notes.bin',
        mimeType: 'application/octet-stream',
        size: bytes.length,
      },
    ]);
    expect(JSON.stringify(binDown)).not.toContain(bytes.toString('base64'));

    // text goes up as text and comes back as an embedded text resource
    const txt = await upload({
      filename: 'notes.md',
      contentType: 'text/markdown; charset=utf-8',
      text: '# Minutes\nÅrsmøte ✓',
    });
    expect(txt.size).toBe(Buffer.byteLength('# Minutes\nÅrsmøte ✓'));
    const txtDown = await get(txt.id);
    expect(txtDown.content).toEqual([
      {
        type: 'resource',
        resource: {
          uri: `svc://rooms/${w.roomId}/files/${txt.id}`,
          mimeType: 'text/markdown; charset=utf-8',
          text: '# Minutes\nÅrsmøte ✓',
        },
      },
    ]);
    expect(txtDown.structuredContent).toMatchObject({ delivery: 'text' });
    const json = await upload({ filename: 'data.json', contentType: 'application/json', text: '{"a":1}' });
    expect((await get(json.id)).content).toMatchObject([{ type: 'resource', resource: { text: '{"a":1}' } }]);

    // an image comes back as an image block
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const img = await upload({ filename: 'dot.png', contentType: 'image/png', contentBase64: png.toString('base64') });
    expect((await get(img.id)).content).toEqual([
      { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
    ]);

    // exactly one of text and contentBase64
    for (const args of [{}, { text: 'a', contentBase64: 'YQ==' }]) {
      const bad = await c.callTool({
        name: 'upload_file',
        arguments: { roomId: w.roomId, filename: 'x.txt', contentType: 'text/plain', ...args },
      });
      expect(bad.isError).toBe(true);
      expect(bodyOf(bad).error.message).toContain('exactly one of contentBase64 and text');
    }
  });

  it('streams over SSE when the client asks for progress, JSON otherwise', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const progress: number[] = [];
    const r = await c.callTool({ name: 'get_me', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(r.structuredContent).toMatchObject({ id: w.owner.id });
    expect(progress).toEqual([1]);

    const sse = await postMcp(
      t,
      { ...toolCall('get_me'), params: { name: 'get_me', arguments: {}, _meta: { progressToken: 'p1' } } },
      { token: w.key },
    );
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sse.text).toMatch(/notifications\/progress/);
    // a stream's answer carries the security headers and the request id too
    expect(sse.headers.get('x-content-type-options')).toBe('nosniff');
    expect(sse.headers.get('x-request-id')).toMatch(/^req_/);
    const json = await postMcp(t, toolCall('get_me'), { token: w.key });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.body.result.structuredContent.id).toBe(w.owner.id);
  });

  it('sends the pipeline headers and audits one row per tool call with surface mcp', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const r = await postMcp(t, toolCall('get_me'), { token: w.key, headers: { 'x-request-id': 'client-req-1' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('client-req-1');
    expect(r.body.result._meta['svc/requestId']).toBe('client-req-1');
    expect(r.headers.get('ratelimit-limit')).toBeTruthy();
    expect(r.headers.get('svc-api-units-cost')).toBe('1');

    await using c = await connectMcp(t, { token: w.key });
    await c.listTools();
    await c.callTool({ name: 'list_rooms', arguments: {} });
    await c.callTool({ name: 'get_room', arguments: { roomId: w.dmRoomId } });
    const rows = (await listAudit(t.rt.services, { limit: 50 })).filter((a) => a.surface === 'mcp');
    expect(rows.map((a) => [a.method, a.routePattern, a.statusCode, a.errorCode]).reverse()).toEqual([
      ['TOOL', 'get_me', 200, null],
      ['TOOL', 'list_rooms', 200, null],
      ['TOOL', 'get_room', 404, 'room_not_found'],
    ]);
    expect(rows[0]).toMatchObject({
      actor: 'app',
      authMethod: 'api_key',
      apiKeyId: w.keyId,
      userId: w.owner.id,
      organizationId: w.orgId,
      units: 1,
    });
    expect(rows.find((a) => a.requestId === 'client-req-1')).toBeDefined();
    // REST and MCP are told apart in the audit
    await call(t, 'GET', '/v1/me', { key: w.key });
    const all = await listAudit(t.rt.services, { limit: 1 });
    expect(all[0]).toMatchObject({ surface: 'rest', routePattern: '/v1/me' });
  });
});
