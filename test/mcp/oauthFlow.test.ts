import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { approveClient } from '../../src/oauth/clientApprovals.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { bodyOf, post2026, postMcp, toolCall } from './mcpClient.js';
import { HostProvider, REDIRECT } from './hostProvider.js';
import { clientDocument, startMetadataServer } from '../oauth/metadataServer.js';

async function registerAgent(t: TestServer, scopes?: string[]) {
  const { client } = await inTransaction(t.rt.services, (m) =>
    createClient(m, t.rt.services.now(), {
      name: 'Desk assistant',
      redirectUris: [REDIRECT],
      type: 'public',
      kind: 'agent',
      scopes,
    }),
  );
  return client.id;
}

/** A token obtained by hand (PKCE S256) for a chosen resource and scopes. */
async function tokenFor(
  t: TestServer,
  clientId: string,
  user: { email: string; password: string },
  resource: string,
  scope: string,
) {
  return (await tokensFor(t, clientId, user, resource, scope)).access_token;
}

/** The tokens (access and refresh) of a code flow for `user`, through the consent page. */
async function tokensFor(
  t: TestServer,
  clientId: string,
  user: { email: string; password: string },
  resource: string,
  scope: string,
) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', t.baseUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope,
    resource,
    state: 's',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const back = await consentInBrowser(t, url, user);
  const res = await t.fetch('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
    }).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string; token_type: string; scope: string };
}

describe('MCP with OAuth: an administrator-registered agent client', () => {
  it('runs the whole flow through the SDK: discovery, PKCE, consent, token, audited tool calls', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const provider = new HostProvider(await registerAgent(t));
    const mcpUrl = new URL(`${t.baseUrl}/mcp`);

    // 1. unauthenticated: the 401 points at the protected-resource metadata, the SDK discovers the server
    const first = new Client({ name: 'desk', version: '1' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const auth = provider.authorizationUrl!;
    expect(`${auth.origin}${auth.pathname}`).toBe(`${t.baseUrl}/oauth/authorize`);
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: REDIRECT,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/mcp`,
      state: 'state-123',
    });
    expect(auth.searchParams.get('scope')).toContain('mcp:tools');

    // 2. the user signs in and allows; the server redirects back with code, state and iss (RFC 9207)
    const back = await consentInBrowser(t, auth, w.member);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('iss')).toBe(t.baseUrl);

    // 3. the SDK exchanges the code with its PKCE verifier
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(provider.saved).toMatchObject({
      token_type: expect.stringMatching(/^bearer$/i),
      access_token: expect.stringMatching(/^svc_at_/),
      refresh_token: expect.stringMatching(/^svc_rt_/),
    });

    // 4. tool calls as the agent, bounded by the member's permissions, audited as actor=agent
    const c = new Client({ name: 'desk', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    try {
      expect((await c.listTools()).tools.map((x) => x.name)).toContain('create_message');
      const me = await c.callTool({ name: 'get_me', arguments: {} });
      expect(me.structuredContent).toMatchObject({ id: w.member.id, organizationId: w.orgId });
      const msg = await c.callTool({
        name: 'create_message',
        arguments: { roomId: w.roomId, body: 'Drafted by the assistant' },
      });
      expect(msg.isError).toBeFalsy();
      const dm = await c.callTool({ name: 'get_room', arguments: { roomId: w.dmRoomId } });
      expect(bodyOf(dm).error.code).toBe('room_not_found');
    } finally {
      await c.close();
    }
    const rows = (await listAudit(t.rt.services, { actor: 'agent' })).filter((a) => a.method === 'TOOL');
    expect(rows.map((a) => a.routePattern).reverse()).toEqual(['get_me', 'create_message', 'get_room']);
    for (const row of rows) {
      expect(row).toMatchObject({
        surface: 'mcp',
        actor: 'agent',
        authMethod: 'oauth_bearer',
        userId: w.member.id,
        delegatingUserId: w.member.id,
        organizationId: w.orgId,
        apiKeyId: null,
      });
      expect(row.tokenId).toBeTruthy();
    }
  });

  it('refuses a token pinned to /v1 with 403 invalid_audience, and a /mcp token on /v1 alike', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const v1Token = await tokenFor(t, clientId, w.member, `${t.baseUrl}/v1`, 'mcp:tools me:read');
    const r = await postMcp(t, toolCall('get_me'), { token: v1Token });
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(r.body.error).toMatchObject({ code: 'invalid_audience' });
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({ surface: 'mcp', statusCode: 403, errorCode: 'invalid_audience', actor: 'agent' });

    const mcpToken = await tokenFor(t, clientId, w.member, `${t.baseUrl}/mcp`, 'mcp:tools me:read');
    expect((await postMcp(t, toolCall('get_me'), { token: mcpToken })).status).toBe(200);
    const onRest = await call(t, 'GET', '/v1/me', { key: mcpToken });
    expect(onRest.status).toBe(403);
    expect(onRest.body.error.code).toBe('invalid_audience');
  });

  it('challenges a token that lacks a tool scope, keeping what it holds, and the SDK steps up', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const token = await tokenFor(t, clientId, w.member, `${t.baseUrl}/mcp`, 'mcp:tools me:read');
    const r = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'x' }), { token });
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:tools messages:write me:read", resource_metadata="/,
    );
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({
      surface: 'mcp',
      routePattern: 'create_message',
      statusCode: 403,
      errorCode: 'insufficient_scope',
      actor: 'agent',
    });

    // the SDK client answers the challenge by asking the user for the named scopes
    const provider = new HostProvider(clientId);
    provider.saved = { access_token: token, token_type: 'Bearer' };
    const c = new Client({ name: 'desk', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), { authProvider: provider }));
    try {
      expect((await c.listTools()).tools.map((x) => x.name)).toEqual(['get_me']);
      await expect(
        c.callTool({ name: 'create_message', arguments: { roomId: w.roomId, body: 'x' } }),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizationUrl?.searchParams.get('scope')).toBe('mcp:tools messages:write me:read');
    } finally {
      await c.close();
    }
  });
});

/**
 * An MCP host identified by a Client ID Metadata Document (SEP-991): no client information of its own, only
 * `clientMetadataUrl`; it listens for the redirect on an ephemeral loopback port.
 */
class MetadataDocumentHost extends HostProvider {
  info?: OAuthClientInformationMixed;
  constructor(
    readonly clientMetadataUrl: string,
    readonly callback: string,
  ) {
    super('');
  }
  override get redirectUrl() {
    return this.callback;
  }
  override get clientMetadata(): OAuthClientMetadata {
    return { ...super.clientMetadata, redirect_uris: [this.callback] };
  }
  override clientInformation(): OAuthClientInformationMixed {
    return this.info as OAuthClientInformationMixed;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
}

describe('MCP with OAuth: a client metadata document client', () => {
  it('the SDK client connects with its client-id URL after one approval, from a loopback port other than the registered one', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const site = await startMetadataServer(t);
    try {
      const url = site.url('/mcp-client.json');
      // the document registers the loopback address without a port; the host listens on an ephemeral one
      site.json(
        '/mcp-client.json',
        clientDocument(url, { client_name: 'Desk assistant', redirect_uris: ['http://127.0.0.1/callback'] }),
      );
      const s = t.rt.services;
      await s.ds.transaction((m) =>
        approveClient(m, s.now(), { pattern: url, organizationId: w.orgId, createdById: w.owner.id }),
      );
      const callback = 'http://127.0.0.1:61999/callback';
      const provider = new MetadataDocumentHost(url, callback);
      const mcpUrl = new URL(`${t.baseUrl}/mcp`);

      const first = new Client({ name: 'desk', version: '1' });
      await expect(
        first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      const auth = provider.authorizationUrl!;
      expect(auth.searchParams.get('client_id')).toBe(url);
      expect(auth.searchParams.get('redirect_uri')).toBe(callback);
      // the SDK asked for the scope of the 401 challenge
      expect(auth.searchParams.get('scope')?.split(' ')).toEqual(
        expect.arrayContaining(['mcp:tools', 'me:read', 'messages:write']),
      );

      const back = await consentInBrowser(t, auth, w.member);
      expect(`${back.origin}${back.pathname}`).toBe(callback);
      await new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }).finishAuth(
        back.searchParams.get('code')!,
      );
      expect(provider.saved?.access_token).toMatch(/^svc_at_/);

      const c = new Client({ name: 'desk', version: '1' });
      await c.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      try {
        const me = await c.callTool({ name: 'get_me', arguments: {} });
        expect(me.structuredContent).toMatchObject({ id: w.member.id, organizationId: w.orgId });
        const msg = await c.callTool({
          name: 'create_message',
          arguments: { roomId: w.roomId, body: 'Hello from a metadata-document client' },
        });
        expect(msg.isError).toBeFalsy();
      } finally {
        await c.close();
      }
      const rows = (await listAudit(s, { actor: 'agent' })).filter((a) => a.method === 'TOOL');
      expect(rows.map((a) => a.routePattern).reverse()).toEqual(['get_me', 'create_message']);
    } finally {
      await site.close();
    }
  });
});

describe('MCP with OAuth: the v2 SDK client on 2026-07-28, and what each SDK does on a step-up', () => {
  it('runs the flow with the v2 client (discovery, PKCE, consent, token) and calls tools on 2026-07-28 as actor=agent', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const provider = new HostProvider(await registerAgent(t));
    const mcpUrl = new URL(`${t.baseUrl}/mcp`);
    const first = new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await expect(first.connect(new TransportV2(mcpUrl, { authProvider: provider }))).rejects.toBeInstanceOf(
      UnauthorizedErrorV2,
    );
    const auth = provider.authorizationUrl!;
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({
      client_id: provider.clientId,
      resource: `${t.baseUrl}/mcp`,
      code_challenge_method: 'S256',
    });
    const back = await consentInBrowser(t, auth, w.member);
    // (the v2 SDK checks the callback's `iss` against the issuer it discovered, RFC 9207)
    await new TransportV2(mcpUrl, { authProvider: provider }).finishAuth(back.searchParams);
    expect(provider.saved?.access_token).toMatch(/^svc_at_/);

    const c = new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await c.connect(new TransportV2(mcpUrl, { authProvider: provider }));
    try {
      expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await c.callTool({ name: 'get_me', arguments: {} })).structuredContent).toMatchObject({
        id: w.member.id,
      });
    } finally {
      await c.close();
    }
    const [row] = (await listAudit(t.rt.services, { actor: 'agent' })).filter((a) => a.method === 'TOOL');
    expect(row).toMatchObject({
      surface: 'mcp',
      routePattern: 'get_me',
      actor: 'agent',
      authMethod: 'oauth_bearer',
      delegatingUserId: w.member.id,
    });
  });

  it('refuses a token of /v1 on 2026-07-28 too (403 invalid_audience), before the body is read', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const v1Token = await tokenFor(t, clientId, w.member, `${t.baseUrl}/v1`, 'mcp:tools me:read');
    const r = await post2026(t, 'tools/call', { name: 'get_me', arguments: {} }, { token: v1Token });
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(r.body.error).toMatchObject({ code: 'invalid_audience' });
  });

  it('on a step-up with a stored refresh token: the v1 SDK (1.32.2) refreshes and stops, the v2 SDK asks the user for the wider scope', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerAgent(t);
    const narrow = await tokensFor(t, clientId, w.member, `${t.baseUrl}/mcp`, 'mcp:tools me:read');
    const write = { name: 'create_message', arguments: { roomId: w.roomId, body: 'x' } };

    // v1: the 403 insufficient_scope makes it run its auth flow, which refreshes the token (same narrow scope)
    // rather than asking the user; the retried call is refused again and the error reaches the caller
    const v1 = new HostProvider(clientId);
    v1.saved = { ...narrow };
    const c1 = new Client({ name: 'desk', version: '1' });
    await c1.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), { authProvider: v1 }));
    try {
      const err = await c1.callTool(write).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect(v1.authorizationUrl).toBeUndefined();
      expect(v1.saved?.refresh_token).not.toBe(narrow.refresh_token);
    } finally {
      await c1.close();
    }

    // v2: it sends the user to authorize the challenged scope with the scopes the token holds (a union, in its own
    // order)
    const v2 = new HostProvider(clientId);
    v2.saved = { ...narrow };
    const c2 = new ClientV2({ name: 'desk', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await c2.connect(new TransportV2(new URL(`${t.baseUrl}/mcp`), { authProvider: v2 }));
    try {
      const err = await c2.callTool(write).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect(v2.authorizationUrl?.searchParams.get('scope')?.split(' ').sort()).toEqual([
        'mcp:tools',
        'me:read',
        'messages:write',
      ]);
    } finally {
      await c2.close();
    }
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body.data).toEqual([]);
  });
});
