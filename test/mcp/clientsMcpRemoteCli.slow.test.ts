import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { freePort, tempHome, tokensByHand } from './clientsProcess.js';

// (slow tier by its name: it starts the bridge as a child process, as a desktop host does)

const BRIDGE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('mcp-remote/package.json')),
  'dist/proxy.js',
);

/** A stdio host (the v1 SDK's client) running `npx mcp-remote <args>`; the bridge's stderr is kept to read its URLs. */
function startBridge(args: string[], home: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE, ...args],
    env: { PATH: process.env.PATH ?? '', HOME: home, MCP_REMOTE_CONFIG_DIR: home, BROWSER: 'true' },
    stderr: 'pipe',
  });
  let err = '';
  const waiters: Array<() => void> = [];
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  let seen = 0;
  const client = new ClientV1({ name: 'stdio-host', version: '1.0.0' });
  return {
    client,
    transport,
    stderr: () => err,
    /** The next authorization URL the bridge prints ("Please authorize this client by visiting: …"). */
    async nextAuthorizationUrl(): Promise<URL> {
      for (;;) {
        const m = /https?:\/\/\S+\/oauth\/authorize\?\S+/.exec(err.slice(seen));
        if (m) {
          seen += m.index + m[0].length;
          return new URL(m[0]);
        }
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    /**
     * Resolves once the bridge listens for the redirect: on a step-up it prints the URL before it starts its
     * listener, so a browser faster than that would find the port closed.
     */
    async callbackListening(port: number) {
      while (!err.includes(`OAuth callback server running at http://127.0.0.1:${port}`))
        await new Promise<void>((r) => waiters.push(r));
    },
  };
}

async function registerBridgeClient(t: TestServer, port: number) {
  const { client } = await inTransaction(t.rt.services, (m) =>
    createClient(m, t.rt.services.now(), {
      name: 'mcp-remote',
      kind: 'agent',
      type: 'public',
      redirectUris: [`http://localhost:${port}/oauth/callback`],
    }),
  );
  return client.id;
}

const toolRows = async (t: TestServer, tool: string) =>
  (await listAudit(t.rt.services, { limit: 100 }))
    .filter((r) => r.surface === 'mcp' && r.routePattern === tool)
    .reverse();

/**
 * The bridge stopped at the 403 `invalid_audience` and started no sign-in. It ends with a fatal error that names
 * the refusal, or, when the refusal's text holds "404" or "405" (a port or a request id can), after one more
 * attempt over SSE that the server refuses with 403 as well: mcp-remote takes those digits for a missing endpoint
 * and falls back to its other transport first.
 */
function expectAudienceRefusal(stderr: string): void {
  expect(stderr).toMatch(/Fatal error: /);
  expect(stderr).toMatch(/(Fatal error: |Received error \(status 403\): ).*invalid_audience/);
  expect(stderr).not.toMatch(/oauth\/authorize/);
}

describe('mcp-remote with OAuth, registered and started as docs/mcp.md shows', () => {
  it('signs in (the test plays the browser from the URL it prints), lists the tools and calls one; a restart reuses the stored token; on a step-up it asks the user again for the challenged scopes and retries the call; a stored /v1 token ends the bridge', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const port = await freePort();
    const clientId = await registerBridgeClient(t, port);
    using home = tempHome('svc-mcp-remote-');
    const args = [
      `${t.baseUrl}/mcp`,
      String(port),
      '--static-oauth-client-info',
      JSON.stringify({ client_id: clientId }),
    ]; // the guide's arguments; no --allow-http: plain http is allowed on 127.0.0.1 and localhost

    // 1. the first start signs in: the bridge prints the authorization URL and waits on localhost:<port>
    const first = startBridge(args, home.dir);
    const connected = first.client.connect(first.transport);
    connected.catch(() => {}); // awaited below; a failure before that must not surface as unhandled
    try {
      const auth = await first.nextAuthorizationUrl();
      expect(Object.fromEntries(auth.searchParams)).toMatchObject({
        client_id: clientId,
        redirect_uri: `http://localhost:${port}/oauth/callback`,
        resource: `${t.baseUrl}/mcp`,
        code_challenge_method: 'S256',
      });
      const back = await consentInBrowser(t, auth, w.member);
      await first.callbackListening(port);
      expect((await fetch(back)).status).toBe(200);
      await connected;
      expect((await first.client.listTools()).tools.map((x) => x.name)).toContain('create_message');
      expect((await first.client.callTool({ name: 'get_me', arguments: {} })).structuredContent).toMatchObject({
        id: w.member.id,
      });
    } finally {
      await first.client.close();
    }
    const [row] = await toolRows(t, 'get_me');
    expect(row).toMatchObject({ actor: 'agent', authMethod: 'oauth_bearer', delegatingUserId: w.member.id });

    // 2. a restart uses the stored token without asking
    const store = path.join(home.dir, 'mcp-remote-v1');
    const tokensFile = path.join(
      store,
      fs.readdirSync(store).find((f) => f.endsWith('_tokens.json'))!,
    );
    expect(JSON.parse(fs.readFileSync(tokensFile, 'utf8')).access_token).toMatch(/^svc_at_/);
    const again = startBridge(args, home.dir);
    try {
      await again.client.connect(again.transport);
      expect((await again.client.callTool({ name: 'get_me', arguments: {} })).isError).toBeFalsy();
    } finally {
      await again.client.close();
    }
    expect(again.stderr()).not.toMatch(/oauth\/authorize/);

    // 3. step-up: it holds a narrow token (and its refresh token); a write is challenged (403 insufficient_scope),
    //    the bridge sends the user to authorize the challenged scopes, and the host's call succeeds after consent
    const narrow = await tokensByHand(t, {
      clientId,
      redirectUri: `http://localhost:${port}/oauth/callback`,
      user: w.member,
      resource: `${t.baseUrl}/mcp`,
      scope: 'mcp:tools me:read',
    });
    fs.writeFileSync(tokensFile, JSON.stringify(narrow));
    const stepUp = startBridge(args, home.dir);
    try {
      await stepUp.client.connect(stepUp.transport);
      expect((await stepUp.client.listTools()).tools.map((x) => x.name)).toEqual(['get_me']);
      const write = stepUp.client.callTool({
        name: 'create_message',
        arguments: { roomId: w.roomId, body: 'stepped up' },
      });
      write.catch(() => {}); // awaited below; a failure before that must not surface as unhandled
      const auth = await stepUp.nextAuthorizationUrl();
      expect(auth.searchParams.get('scope')?.split(' ').sort()).toEqual(['mcp:tools', 'me:read', 'messages:write']);
      const back = await consentInBrowser(t, auth, w.member);
      await stepUp.callbackListening(port);
      expect((await fetch(back)).status).toBe(200);
      expect((await write).structuredContent).toMatchObject({ body: 'stepped up', postedBy: 'agent' });
    } finally {
      await stepUp.client.close();
    }
    expect((await toolRows(t, 'create_message')).map((r) => r.statusCode)).toEqual([403, 201]);

    // 4. a stored token of /v1: the 403 invalid_audience ends the bridge (the host sees the connection close);
    //    it neither refreshes nor signs in again, so the user has to remove the stored tokens
    const rest = await tokensByHand(t, {
      clientId,
      redirectUri: `http://localhost:${port}/oauth/callback`,
      user: w.member,
      resource: `${t.baseUrl}/v1`,
      scope: 'mcp:tools me:read',
    });
    fs.writeFileSync(tokensFile, JSON.stringify(rest));
    const other = startBridge(args, home.dir);
    try {
      await expect(other.client.connect(other.transport)).rejects.toThrow(/Connection closed/);
    } finally {
      await other.client.close();
    }
    expectAudienceRefusal(other.stderr());
    expect(JSON.parse(fs.readFileSync(tokensFile, 'utf8'))).toMatchObject({
      access_token: rest.access_token,
      refresh_token: rest.refresh_token,
    });
  });

  it('with a /v1 token in --header it stops at the 403 invalid_audience and starts no sign-in', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const port = await freePort();
    const clientId = await registerBridgeClient(t, port);
    using home = tempHome('svc-mcp-remote-');
    const rest = await tokensByHand(t, {
      clientId,
      redirectUri: `http://localhost:${port}/oauth/callback`,
      user: w.member,
      resource: `${t.baseUrl}/v1`,
      scope: 'mcp:tools me:read',
    });
    const b = startBridge([`${t.baseUrl}/mcp`, '--header', `Authorization:Bearer ${rest.access_token}`], home.dir);
    try {
      await expect(b.client.connect(b.transport)).rejects.toThrow(/Connection closed/);
    } finally {
      await b.client.close();
    }
    expectAudienceRefusal(b.stderr());
    const [row] = await listAudit(t.rt.services, { limit: 1 });
    expect(row).toMatchObject({ surface: 'mcp', statusCode: 403, errorCode: 'invalid_audience' });
  });
});
