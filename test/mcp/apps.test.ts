import { describe, expect, it } from 'vitest';
import { APP_ONLY_TOOLS, APPS_EXTENSION, isAppOnly, VIEW_MIME_TYPE, VIEWS } from '../../mcp/apps/catalog.js';
import { VIEW_MAX_BYTES } from '../../mcp/apps/bundle.js';
import { call, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { ENVELOPE_2026, post2026, postMcp, toolCall } from './mcpClient.js';

/** The 2026-07-28 envelope of a client that declares MCP Apps. */
const appsEnvelope = {
  ...ENVELOPE_2026,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [APPS_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } } },
};
const withApps = { _meta: appsEnvelope };
const VIEW_TOOLS = VIEWS.map((v) => v.tool);

describe('MCP Apps (io.modelcontextprotocol/ui)', () => {
  it('is declared on both revisions, and links the views only for a 2026-07-28 client that declared it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const init = await postMcp(
      t,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } } },
          clientInfo: { name: 'host', version: '1' },
        },
      },
      { token: w.key },
    );
    expect(init.body.result.capabilities.extensions).toHaveProperty([APPS_EXTENSION]);
    const discover = await post2026(t, 'server/discover', {}, { token: w.key });
    expect(discover.body.result.capabilities.extensions).toHaveProperty([APPS_EXTENSION]);

    const plain = (await post2026(t, 'tools/list', {}, { token: w.key })).body.result.tools as any[];
    const listed = (await post2026(t, 'tools/list', withApps, { token: w.key })).body.result.tools as any[];
    // without the extension: no tool carries a view, no app-only tool is offered
    expect(plain.filter((x) => x._meta?.ui)).toEqual([]);
    expect(plain.filter((x) => isAppOnly(x.name))).toEqual([]);
    // with it: the app-only tools too, marked so that the host does not offer them to the model
    const appOnly = listed.filter((x) => isAppOnly(x.name));
    expect(appOnly.map((x) => x.name)).toEqual([...APP_ONLY_TOOLS].sort());
    for (const tool of appOnly) expect(tool._meta.ui).toEqual({ visibility: ['app'] });
    // every other tool the same, to the byte, but for its view's link
    const apps = listed.filter((x) => !isAppOnly(x.name));
    expect(apps.map((x) => x.name)).toEqual(plain.map((x) => x.name));
    for (const [i, tool] of apps.entries()) {
      const view = VIEWS.find((v) => v.tool === tool.name);
      const { ui, ...meta } = tool._meta ?? {};
      expect({ ...tool, _meta: Object.keys(meta).length ? meta : undefined }).toEqual({
        ...plain[i],
        _meta: plain[i]._meta,
      });
      expect(ui).toEqual(view ? { resourceUri: view.uri } : undefined);
    }
    expect(apps.filter((x) => x._meta?.ui).map((x) => x.name)).toEqual([...VIEW_TOOLS].sort());

    // a 2025 request carries no capabilities (stateless): its list links the views, one short field each
    const legacy = (await postMcp(t, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { token: w.key })).body.result
      .tools as any[];
    expect(legacy.filter((x) => x._meta?.ui).map((x) => x.name)).toEqual([...VIEW_TOOLS].sort());
    // and no app-only tool: a 2025 client without Apps would offer it to its model
    expect(legacy.filter((x) => isAppOnly(x.name))).toEqual([]);

    // resources/list names the views for a client of the extension only
    const viewList = (await post2026(t, 'resources/list', withApps, { token: w.key })).body.result.resources as any[];
    expect(viewList.filter((r) => r.uri.startsWith('ui://')).map((r) => r.mimeType)).toEqual(
      VIEWS.map(() => VIEW_MIME_TYPE),
    );
    const bare = (await post2026(t, 'resources/list', {}, { token: w.key })).body.result.resources as any[];
    expect(bare.some((r) => r.uri.startsWith('ui://'))).toBe(false);
  });

  it('serves each view as one self-contained document with its declared CSP, under 512 KB', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const view of VIEWS) {
      const read = await post2026(t, 'resources/read', { uri: view.uri, ...withApps }, { token: w.key });
      const [content] = read.body.result.contents;
      expect(content).toMatchObject({ uri: view.uri, mimeType: VIEW_MIME_TYPE });
      expect(content._meta.ui.csp).toEqual({
        connectDomains: [],
        resourceDomains: [],
        frameDomains: [],
        baseUriDomains: [],
      });
      const html = content.text as string;
      expect(Buffer.byteLength(html)).toBeLessThan(VIEW_MAX_BYTES);
      expect(html.startsWith('<!doctype html>')).toBe(true);
      // nothing loaded from elsewhere: one inline script and one inline style, and the document's own policy
      expect(html).not.toMatch(/<script[^>]*\bsrc=|<link\b|@import|<iframe/i);
      expect(html.match(/<script>/g)).toHaveLength(1);
      expect(html).toMatch(/http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
      // the view renders text, never markup
      expect(html).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
    // a ui:// URI that is not a view is not found, as any unknown resource
    const unknown = await post2026(t, 'resources/read', { uri: 'ui://svc/admin' }, { token: w.key });
    expect(unknown.body.error.code).toBe(-32602);
    // a 2025 client reads them too
    const legacy = await postMcp(
      t,
      { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: VIEWS[0].uri } },
      { token: w.key },
    );
    expect(legacy.body.result.contents[0].mimeType).toBe(VIEW_MIME_TYPE);
  });

  it('answers every tool with a view exactly as before, for a client of the extension or not', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const rec = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
      key: w.key,
      body: { title: 'Weekly <b>sync</b>', body: 'minutes' },
    });
    await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key: w.key, body: { title: 'Ship it' } });
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hello' } });
    const args: Record<string, Record<string, unknown>> = {
      get_record: { roomId: w.roomId, recordId: rec.body.id },
      list_tasks: { roomId: w.roomId },
      list_messages: { roomId: w.roomId },
    };
    for (const tool of VIEW_TOOLS) {
      const params = toolCall(tool, args[tool]).params;
      const plain = (await post2026(t, 'tools/call', params, { token: w.key })).body.result;
      const apps = (await post2026(t, 'tools/call', { ...params, ...withApps }, { token: w.key })).body.result;
      const strip = (r: any) => ({ content: r.content, structuredContent: r.structuredContent, isError: r.isError });
      expect(strip(apps)).toEqual(strip(plain));
      expect(plain.structuredContent).toBeTruthy();
    }
  });

  it('a view reads only what its caller may: the same scopes, read-only mode and rooms', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const rec = await call(t, 'POST', `/v1/rooms/${other.roomId}/records`, {
      key: other.key,
      body: { title: 'Theirs', body: 'secret minutes' },
    });
    // another organization's record, asked for by a view with this caller's token: not found
    const foreign = await post2026(
      t,
      'tools/call',
      { name: 'get_record', arguments: { roomId: other.roomId, recordId: rec.body.id }, ...withApps },
      { token: w.key },
    );
    expect(foreign.body.result.isError).toBe(true);
    expect(foreign.text).not.toContain('secret minutes');
    // a read-only connection: the view's approve is refused as the model's would be
    const readOnly = await post2026(
      t,
      'tools/call',
      { name: 'approve_record', arguments: { roomId: w.roomId, recordId: 'rec_x' }, ...withApps },
      { token: w.key, headers: { 'x-mcp-readonly': 'true' } },
    );
    expect(readOnly.body.error.code).toBe(-32602);
    // a key without records:read cannot read a record of its own room behind the view either
    const own = await call(t, 'POST', `/v1/rooms/${w.roomId}/records`, {
      key: w.key,
      body: { title: 'Ours', body: 'x' },
    });
    const narrow = (await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['mcp:tools'] })).token;
    const scoped = await post2026(
      t,
      'tools/call',
      { name: 'get_record', arguments: { roomId: w.roomId, recordId: own.body.id }, ...withApps },
      { token: narrow },
    );
    expect(scoped.text).toContain('insufficient_scope');
    expect(scoped.text).not.toContain('"Ours"');
  });

  it("the record view's app-only history tool obeys the same rights: rooms, scopes and toolsets", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const other = await createWorld(t.rt, 'Other');
    const rec = (await call(t, 'POST', `/v1/rooms/${other.roomId}/records`, { key: other.key, body: { title: 'T' } }))
      .body.id as string;
    await call(t, 'POST', `/v1/rooms/${other.roomId}/records/${rec}/approval/request`, {
      key: other.key,
      body: { comment: 'secret reasons' },
    });
    const history = (token: string, headers?: Record<string, string>, roomId = other.roomId) =>
      post2026(
        t,
        'tools/call',
        { name: 'list_record_approvals', arguments: { roomId, recordId: rec }, ...withApps },
        { token, headers },
      );
    // the owner's own view reads it, with the requester's name in the text (the view names people from it)
    const own = await history(other.key);
    expect(own.body.result.structuredContent.data).toMatchObject([{ status: 'pending', comment: 'secret reasons' }]);
    expect(own.body.result.content[0].text).toMatch(/users: .*owner.*=usr_/);
    // another organization's view: not found, nothing of the history
    const foreign = await history(w.key);
    expect(foreign.body.result.isError).toBe(true);
    expect(foreign.text).not.toContain('secret reasons');
    // asked through a room of the caller's own: not found either
    expect((await history(w.key, {}, w.roomId)).body.result.isError).toBe(true);
    // a credential without records:read
    const narrow = (
      await issueKey(t.rt, { userId: other.owner.id, organizationId: other.orgId, scopes: ['mcp:tools'] })
    ).token;
    const scoped = await history(narrow);
    expect(scoped.text).toContain('insufficient_scope');
    expect(scoped.text).not.toContain('secret reasons');
    // a connection whose toolsets leave records out: an unknown tool, as for any tool outside them
    const narrowed = await history(other.key, { 'x-mcp-toolsets': 'messages' });
    expect(narrowed.body.error.code).toBe(-32602);
    // it only reads: a read-only connection lists and calls it
    const readOnly = await history(other.key, { 'x-mcp-readonly': 'true' });
    expect(readOnly.body.result.structuredContent.data).toHaveLength(1);
  });
});
