import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { listProcedures } from '../../src/procedures/index.js';
import { buildToolCatalog } from '../../mcp/tools/toolCatalog.js';
import { TOOLSETS, toolsetOf } from '../../mcp/tools/toolsets.js';
import { isAppOnly } from '../../mcp/apps/catalog.js';
import { ALL_SCOPES, call, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { postMcp, toolCall } from './mcpClient.js';
import { HostProvider, REDIRECT } from './hostProvider.js';

/** An SDK client on a URL of our choosing (the URL form of a selection), with headers. */
async function connectAt(
  t: TestServer,
  path: string,
  o: { token?: string; headers?: Record<string, string>; authProvider?: OAuthClientProvider } = {},
) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  const client = new Client({ name: 'toolsets-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(path, t.baseUrl), {
      requestInit: { headers },
      authProvider: o.authProvider,
    }),
  );
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name).sort();
const everyScope = [...ALL_SCOPES, 'agent:invoke'];
const expected = (pred: (p: ReturnType<typeof listProcedures>[number]) => boolean) =>
  listProcedures()
    // (an MCP Apps view's own tool is listed to a client of the extension only: test/mcp/apps.test.ts)
    .filter((p) => !p.meta.restOnly && !p.meta.runOnly && !isAppOnly(p.meta.tool.name) && pred(p))
    .map((p) => p.meta.tool.name)
    .sort();

describe('MCP toolsets and read-only mode', () => {
  it('every tool belongs to one of the documented toolsets', () => {
    for (const { proc } of buildToolCatalog().values()) expect(TOOLSETS).toContain(toolsetOf(proc.meta));
    expect(toolsetOf(buildToolCatalog().get('list_organizations')!.proc.meta)).toBe('me');
  });

  it('narrows tools/list by X-MCP-Toolsets and X-MCP-Readonly, and refuses a call outside the selection as an unknown tool', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const all = (await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: everyScope })).token;

    await using everything = await connectAt(t, '/mcp', { token: all });
    expect(await names(everything)).toEqual(expected(() => true));
    await using allHeader = await connectAt(t, '/mcp', { token: all, headers: { 'X-MCP-Toolsets': 'all' } });
    expect(await names(allHeader)).toEqual(expected(() => true));

    await using narrow = await connectAt(t, '/mcp', { token: all, headers: { 'X-MCP-Toolsets': 'messages, Tasks' } });
    expect(await names(narrow)).toEqual(expected((p) => ['messages', 'tasks'].includes(toolsetOf(p.meta))));
    expect(await names(narrow)).toEqual(expect.arrayContaining(['create_message', 'list_tasks', 'update_task']));
    const posted = await narrow.callTool({
      name: 'create_message',
      arguments: { roomId: w.roomId, body: 'in the selection' },
    });
    expect(posted.isError).toBeFalsy();
    // a tool outside the selection: the JSON-RPC error of an unknown tool, saying why; nothing runs
    await expect(narrow.callTool({ name: 'create_room', arguments: { name: 'Sneaky' } })).rejects.toThrow(
      /Unknown tool: create_room is in toolset rooms/,
    );
    const rooms = await call(t, 'GET', '/v1/rooms', { key: all });
    expect(rooms.body.data.map((r: { name: string }) => r.name)).not.toContain('Sneaky');
    // the fast path for a lone tools/call refuses it the same way
    const raw = await postMcp(t, toolCall('create_room', { name: 'Sneaky' }), {
      token: all,
      headers: { 'x-mcp-toolsets': 'messages' },
    });
    expect(raw.status).toBe(200);
    expect(raw.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Unknown tool: create_room/),
    });
    const audit = await listAudit(t.rt.services, { limit: 1 });
    expect(audit[0]).toMatchObject({ routePattern: '(unknown tool)', statusCode: 404 });

    await using readOnly = await connectAt(t, '/mcp', { token: all, headers: { 'X-MCP-Readonly': 'true' } });
    const ro = await readOnly.listTools();
    expect(ro.tools.map((x) => x.name).sort()).toEqual(expected((p) => p.meta.kind === 'read'));
    expect(ro.tools.every((x) => x.annotations?.readOnlyHint === true)).toBe(true);
    await expect(
      readOnly.callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'no' } }),
    ).rejects.toThrow(/create_message is a write tool and this connection is read-only/);
    expect((await readOnly.callTool({ name: 'list_messages', arguments: { roomId: w.roomId } })).isError).toBeFalsy();

    await using roTasks = await connectAt(t, '/mcp', {
      token: all,
      headers: { 'X-MCP-Toolsets': 'tasks', 'X-MCP-Readonly': 'TRUE' },
    });
    expect(await names(roTasks)).toEqual(['get_task', 'list_tasks']);
  });

  it('takes the same selection from the URL, for clients that cannot set headers', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectAt(t, '/mcp?toolsets=rooms,me&readonly=true', { token: w.key });
    expect(await names(c)).toEqual([
      'get_me',
      'get_room',
      'list_organization_members',
      'list_organizations',
      'list_room_members',
      'list_rooms',
    ]);
    await expect(c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId } })).rejects.toThrow(
      /Unknown tool: list_messages/,
    );
    // the header and the URL agreeing is fine; disagreeing is an error, not a guess
    await using same = await connectAt(t, '/mcp?toolsets=rooms', {
      token: w.key,
      headers: { 'X-MCP-Toolsets': 'rooms' },
    });
    expect(await names(same)).toContain('list_rooms');
    const viaUrl = await t.fetch('/mcp?toolsets=rooms', {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: {
        authorization: `Bearer ${w.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'x-mcp-toolsets': 'tasks',
      },
    });
    expect(viaUrl.status).toBe(400);
    expect(((await viaUrl.json()) as any).error.message).toMatch(/more than once with different values/);
  });

  it('answers a selection it cannot read with a 400 naming the valid values, never an empty list or a 500', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const cases: [Record<string, string>, RegExp][] = [
      [
        { 'x-mcp-toolsets': 'messages,chat' },
        /Unknown toolset "chat": valid toolsets are all, me, rooms, messages, tasks, records, files, webhooks, events, agents, search/,
      ],
      [{ 'x-mcp-toolsets': '' }, /The toolset list is empty: give a comma-separated list of all, me, rooms/],
      [{ 'x-mcp-toolsets': ' , ' }, /The toolset list is empty/],
      [{ 'x-mcp-readonly': 'yes' }, /Read-only must be true or false, not "yes"/],
    ];
    for (const [headers, message] of cases) {
      const r = await postMcp(t, list, { token: w.key, headers });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.body).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32602, message: expect.stringMatching(message) },
        id: null,
      });
    }
    for (const q of ['toolsets=', 'toolsets=nope', 'readonly=maybe', 'toolsets=rooms&toolsets=tasks']) {
      const r = await t.fetch(`/mcp?${q}`, {
        method: 'POST',
        body: JSON.stringify(list),
        headers: {
          authorization: `Bearer ${w.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
      });
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as any).error.code, q).toBe(-32602);
    }
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({ surface: 'mcp', statusCode: 400, errorCode: 'validation_error' });
    // an unauthenticated request still gets the 401 challenge first (OAuth discovery is unchanged)
    const anon = await postMcp(t, list, { headers: { 'x-mcp-toolsets': 'nope' } });
    expect(anon.status).toBe(401);
  });

  it('refuses a selection spelled another way with a 400, never a read-write connection with every tool', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    for (const q of [
      'readOnly=true',
      'readonly[]=true',
      'READONLY=true',
      'toolSets=me',
      'toolset=me',
      'read_only=true',
      'toolsets[]=me',
      'readonly=true&toolsets=me&extra=1',
      '=',
    ]) {
      const r = await t.fetch(`/mcp?${q}`, {
        method: 'POST',
        body: JSON.stringify(list),
        headers: {
          authorization: `Bearer ${w.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
      });
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as any).error, q).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^Unknown query parameter ".*": \/mcp takes only toolsets and readonly/),
      });
    }
    // the headers' names are matched whatever their case; another spelling of them is refused too
    for (const h of ['x-mcp-read-only', 'x-mcp-toolset', 'x-mcp-read_only', 'x-mcp-tool-sets', 'x_m-c_p-toolsets']) {
      const r = await postMcp(t, list, { token: w.key, headers: { [h]: h.includes('read') ? 'true' : 'me' } });
      expect(r.status, h).toBe(400);
      expect(r.body.error.message, h).toMatch(/^Unknown header x[-_]m.*: the selection headers are X-MCP-Toolsets/);
    }
    const cased = await postMcp(t, list, { token: w.key, headers: { 'X-Mcp-ReadOnly': 'true' } });
    expect(cased.status).toBe(200);
    expect(cased.body.result.tools.every((x: any) => x.annotations.readOnlyHint)).toBe(true);
    // the SDK client given such a URL fails to connect instead of working with every tool
    await expect(connectAt(t, '/mcp?readOnly=true', { token: w.key })).rejects.toThrow(/Unknown query parameter/);
    // the spelling the guide gives still works
    await using c = await connectAt(t, '/mcp?toolsets=rooms&readonly=true', { token: w.key });
    expect(await names(c)).toEqual(['get_room', 'list_room_members', 'list_rooms']);
  });

  it('lets a browser-based client send the selection headers (CORS preflight)', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_ALLOWED_ORIGINS: 'https://inspector.example.com' } });
    const r = await t.fetch('/mcp', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, x-mcp-toolsets, x-mcp-readonly',
      },
    });
    expect(r.status).toBe(204);
    const allowed = r.headers
      .get('access-control-allow-headers')!
      .toLowerCase()
      .split(',')
      .map((h) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['x-mcp-toolsets', 'x-mcp-readonly']));
  });

  it('never grants: a toolset names only tools the scopes already allow, and a call still needs its scope', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const narrow = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['mcp:tools', 'messages:read'] })
    ).token;
    await using c = await connectAt(t, '/mcp', { token: narrow, headers: { 'X-MCP-Toolsets': 'webhooks,messages' } });
    // the reads of messages the one scope allows, nothing of webhooks
    const allowed = expected(
      (p) => ['webhooks', 'messages'].includes(toolsetOf(p.meta)) && p.meta.scope === 'messages:read',
    );
    expect(allowed).toContain('list_messages');
    expect(await names(c)).toEqual(allowed);
    const refused = await postMcp(t, toolCall('list_webhooks', { roomId: w.roomId }), {
      token: narrow,
      headers: { 'x-mcp-toolsets': 'webhooks' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_scope');
    const write = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'x' }), {
      token: narrow,
      headers: { 'x-mcp-toolsets': 'messages' },
    });
    expect(write.status).toBe(403);
  });
});

describe('MCP toolsets in the URL with OAuth', () => {
  it('the SDK client discovers, authorizes and connects on /mcp?toolsets=…: the resource stays /mcp, the selection applies', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { client } = await inTransaction(t.rt.services, (m) =>
      createClient(m, t.rt.services.now(), {
        name: 'Desk assistant',
        redirectUris: [REDIRECT],
        type: 'public',
        kind: 'agent',
      }),
    );
    const provider = new HostProvider(client.id);
    const url = new URL(`${t.baseUrl}/mcp?toolsets=messages&readonly=true`);
    const first = new Client({ name: 'desk', version: '1' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    // the selection is not part of the resource: the token's audience is the MCP endpoint itself
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${t.baseUrl}/mcp`);
    const back = await consentInBrowser(t, provider.authorizationUrl!, w.member);
    await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(back.searchParams.get('code')!);
    const c = new Client({ name: 'desk', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    try {
      expect(await names(c)).toEqual(expected((p) => toolsetOf(p.meta) === 'messages' && p.meta.kind === 'read'));
      await expect(c.callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'x' } })).rejects.toThrow(
        /read-only/,
      );
    } finally {
      await c.close();
    }
  });

  it('refuses a resource that carries a selection: the URL form cannot mint a token of another audience', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const { client } = await inTransaction(t.rt.services, (m) =>
      createClient(m, t.rt.services.now(), {
        name: 'Desk assistant',
        redirectUris: [REDIRECT],
        type: 'public',
        kind: 'agent',
      }),
    );
    const url = new URL('/oauth/authorize', t.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: REDIRECT,
      scope: 'mcp:tools messages:read',
      resource: `${t.baseUrl}/mcp?toolsets=all`,
      state: 's',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    }).toString();
    const back = await consentInBrowser(t, url, w.member).catch((e: Error) => e);
    const text = back instanceof Error ? back.message : back.searchParams.get('error');
    expect(text).toMatch(/invalid_target/);
    // the protected-resource metadata names the endpoint alone, whatever the client connected to
    const meta = (await (await t.fetch('/.well-known/oauth-protected-resource/mcp')).json()) as { resource: string };
    expect(meta.resource).toBe(`${t.baseUrl}/mcp`);
  });
});
