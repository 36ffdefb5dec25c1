import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth as aiSdkAuth, createMCPClient, type OAuthAuthorizationServerInformation } from '@ai-sdk/mcp';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { toolsetOf } from '../../mcp/tools/toolsets.js';
import { listAudit } from '../../src/auth/audit.js';
import { listProcedures } from '../../src/procedures/index.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { tokensByHand } from './clientsProcess.js';
import { HostProvider, REDIRECT } from './hostProvider.js';

async function registerAgent(t: TestServer) {
  const { client } = await inTransaction(t.rt.services, (m) =>
    createClient(m, t.rt.services.now(), {
      name: 'Desk assistant',
      redirectUris: [REDIRECT],
      type: 'public',
      kind: 'agent',
    }),
  );
  return client.id;
}

const toolRows = async (t: TestServer, tool: string) =>
  (await listAudit(t.rt.services, { limit: 100 }))
    .filter((r) => r.surface === 'mcp' && r.routePattern === tool)
    .reverse();

/** @ai-sdk/mcp's provider also keeps the authorization server it discovered, to bind the code exchange to it. */
class AiSdkHost extends HostProvider {
  server?: OAuthAuthorizationServerInformation;
  authorizationServerInformation() {
    return this.server;
  }
  saveAuthorizationServerInformation(info: OAuthAuthorizationServerInformation) {
    this.server = info;
  }
}

/** @ai-sdk/mcp's client over HTTP with an OAuth provider, as docs/mcp.md shows (`transport.authProvider`). */
const aiSdkClient = (t: TestServer, provider: AiSdkHost) =>
  createMCPClient({ transport: { type: 'http', url: `${t.baseUrl}/mcp`, authProvider: provider } });

describe("the Vercel AI SDK's MCP client (@ai-sdk/mcp) with OAuth", () => {
  it('discovers svc from the 401, sends the user to consent, exchanges the code with auth(), lists the tools and calls one', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const provider = new AiSdkHost(await registerAgent(t));
    await expect(aiSdkClient(t, provider)).rejects.toThrow(/Unauthorized/);
    const authUrl = provider.authorizationUrl!;
    expect(Object.fromEntries(authUrl.searchParams)).toMatchObject({
      client_id: provider.clientId,
      redirect_uri: REDIRECT,
      resource: `${t.baseUrl}/mcp`,
      code_challenge_method: 'S256',
    });
    const back = await consentInBrowser(t, authUrl, w.member);
    expect(
      await aiSdkAuth(provider, {
        serverUrl: `${t.baseUrl}/mcp`,
        authorizationCode: back.searchParams.get('code')!,
        callbackState: back.searchParams.get('state')!,
        callbackIssuer: back.searchParams.get('iss')!,
      }),
    ).toBe('AUTHORIZED');
    expect(provider.saved?.access_token).toMatch(/^svc_at_/);

    const client = await aiSdkClient(t, provider);
    try {
      expect(Object.keys(await client.tools())).toContain('create_message');
      const me = await client.callTool({ name: 'get_me', arguments: {} });
      expect(me.structuredContent).toMatchObject({ id: w.member.id });
    } finally {
      await client.close();
    }
    const [row] = await toolRows(t, 'get_me');
    expect(row).toMatchObject({ actor: 'agent', authMethod: 'oauth_bearer', delegatingUserId: w.member.id });
  });

  it('on a step-up (403 insufficient_scope) it neither refreshes nor asks the user: the error reaches the caller', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const narrow = await tokensByHand(t, {
      clientId,
      redirectUri: REDIRECT,
      user: w.member,
      resource: `${t.baseUrl}/mcp`,
      scope: 'mcp:tools me:read',
    });
    const provider = new AiSdkHost(clientId);
    provider.saved = { ...narrow };
    const client = await aiSdkClient(t, provider);
    try {
      expect(Object.keys(await client.tools())).toEqual(['get_me']);
      const err = await client
        .callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'x' } })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'MCPClientError', statusCode: 403 });
      expect(String((err as Error).message)).toContain('insufficient_scope');
    } finally {
      await client.close();
    }
    expect(provider.authorizationUrl).toBeUndefined();
    expect(provider.saved).toEqual(narrow); // not refreshed either
    expect((await toolRows(t, 'create_message')).map((r) => r.statusCode)).toEqual([403]);
  });

  it('with a token of /v1 (from its provider or in headers) it fails to connect with the 403 invalid_audience and starts no sign-in', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const rest = await tokensByHand(t, {
      clientId,
      redirectUri: REDIRECT,
      user: w.member,
      resource: `${t.baseUrl}/v1`,
      scope: 'mcp:tools me:read',
    });
    const provider = new AiSdkHost(clientId);
    provider.saved = { ...rest };
    const viaProvider = await aiSdkClient(t, provider).catch((e: unknown) => e);
    expect(viaProvider).toMatchObject({ name: 'MCPClientError' });
    expect(String((viaProvider as Error).message)).toMatch(/403|invalid_audience/);
    expect(provider.authorizationUrl).toBeUndefined();
    expect(provider.saved).toEqual(rest);

    const viaHeader = await createMCPClient({
      transport: { type: 'http', url: `${t.baseUrl}/mcp`, headers: { Authorization: `Bearer ${rest.access_token}` } },
    }).catch((e: unknown) => e);
    expect(viaHeader).toMatchObject({ name: 'MCPClientError' });
    expect(String((viaHeader as Error).message)).toMatch(/403|invalid_audience/);
    const rows = (await listAudit(t.rt.services, { limit: 10 })).filter((r) => r.surface === 'mcp');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r).toMatchObject({ statusCode: 403, errorCode: 'invalid_audience' });
  });
});

describe('the v2 SDK client with OAuth on the URL form of a toolset selection', () => {
  it('discovers, authorizes for BASE_URL/mcp, connects to /mcp?toolsets=messages&readonly=true on 2026-07-28, sees only that selection and calls a tool', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const provider = new HostProvider(await registerAgent(t));
    const url = new URL(`${t.baseUrl}/mcp?toolsets=messages&readonly=true`);
    const first = new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await expect(first.connect(new TransportV2(url, { authProvider: provider }))).rejects.toBeInstanceOf(
      UnauthorizedErrorV2,
    );
    const authUrl = provider.authorizationUrl!;
    // the selection is not part of the resource: the 401, the metadata and the token all name BASE_URL/mcp
    expect(authUrl.searchParams.get('resource')).toBe(`${t.baseUrl}/mcp`);
    expect(authUrl.searchParams.get('scope')?.split(' ')).toContain('mcp:tools');
    const back = await consentInBrowser(t, authUrl, w.member);
    await new TransportV2(url, { authProvider: provider }).finishAuth(back.searchParams);
    expect(provider.saved?.access_token).toMatch(/^svc_at_/);

    const c = new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await c.connect(new TransportV2(url, { authProvider: provider }));
    try {
      expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      // the reads of the toolset messages, nothing else
      const reads = listProcedures()
        .filter((p) => toolsetOf(p.meta) === 'messages' && p.meta.kind === 'read' && !p.meta.restOnly)
        .map((p) => p.meta.tool.name);
      expect(reads).toContain('list_messages');
      expect((await c.listTools()).tools.map((x) => x.name).sort()).toEqual(reads.sort());
      const page = await c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId } });
      expect(page.isError).toBeFalsy();
      expect(page.structuredContent).toMatchObject({ data: [] });
      await expect(c.callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'x' } })).rejects.toThrow(
        /read-only/,
      );
      await expect(c.callTool({ name: 'get_me', arguments: {} })).rejects.toThrow(/outside this connection's toolsets/);
    } finally {
      await c.close();
    }
    const [row] = await toolRows(t, 'list_messages');
    expect(row).toMatchObject({ statusCode: 200, actor: 'agent', delegatingUserId: w.member.id });
  });
});

describe('the SDK clients with a token of the other surface', () => {
  it('the v1 and v2 SDK clients (both revisions) fail to connect with the 403 invalid_audience, keep the token and start no sign-in', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const rest = await tokensByHand(t, {
      clientId,
      redirectUri: REDIRECT,
      user: w.member,
      resource: `${t.baseUrl}/v1`,
      scope: 'mcp:tools me:read',
    });
    const mcpUrl = new URL(`${t.baseUrl}/mcp`);
    const attempts: Array<[string, (p: HostProvider) => Promise<unknown>]> = [
      ['v1', (p) => new ClientV1({ name: 'desk', version: '1' }).connect(new TransportV1(mcpUrl, { authProvider: p }))],
      ['v2', (p) => new ClientV2({ name: 'desk', version: '1' }).connect(new TransportV2(mcpUrl, { authProvider: p }))],
      [
        'v2 negotiating 2026-07-28',
        (p) =>
          new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } }).connect(
            new TransportV2(mcpUrl, { authProvider: p }),
          ),
      ],
    ];
    for (const [name, connect] of attempts) {
      const provider = new HostProvider(clientId);
      provider.saved = { ...rest };
      const err = await connect(provider).then(
        () => new Error('connected'),
        (e: Error) => e,
      );
      expect(err.message, name).toMatch(/invalid_audience|HTTP 403/);
      expect(provider.authorizationUrl, name).toBeUndefined();
      expect(provider.saved, name).toEqual(rest);
    }
  });
});
