import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { freePort, startClientProcess, tempHome } from './clientsProcess.js';

// (slow tier by its name: each case starts the Inspector CLI as a child process, as a user's shell does)

/** The `mcp-inspector` bin of @modelcontextprotocol/inspector: what `npx @modelcontextprotocol/inspector` runs. */
const INSPECTOR = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);

/** Registers the Inspector as docs/mcp.md shows: its web UI's two callbacks, kind agent, public. */
async function registerInspector(t: TestServer, scopes?: string[]) {
  const { client } = await inTransaction(t.rt.services, (m) =>
    createClient(m, t.rt.services.now(), {
      name: 'MCP Inspector',
      kind: 'agent',
      type: 'public',
      redirectUris: ['http://localhost:6274/oauth/callback', 'http://localhost:6274/oauth/callback/debug'],
      scopes,
    }),
  );
  return client.id;
}

/** Runs `npx @modelcontextprotocol/inspector --cli <args>` to its end and parses its JSON result. */
async function inspector(args: string[], env: Record<string, string>) {
  const p = startClientProcess(INSPECTOR, ['--cli', ...args], env);
  const code = await p.exited;
  return { code, out: p.stdout(), err: p.stderr(), json: () => JSON.parse(p.stdout()) };
}

const mcpRows = async (t: TestServer, tool: string) =>
  (await listAudit(t.rt.services, { limit: 100 })).filter((r) => r.surface === 'mcp' && r.routePattern === tool);

describe('the MCP Inspector CLI (@modelcontextprotocol/inspector --cli)', () => {
  it('lists the tools and calls one with an API key header, exactly as docs/mcp.md shows', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    using home = tempHome('svc-inspector-');
    const env = { HOME: home.dir };
    const base = [`${t.baseUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${w.key}`];

    const list = await inspector([...base, '--method', 'tools/list'], env);
    expect(list.code, list.err).toBe(0);
    const names = (list.json().tools as Array<{ name: string }>).map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['get_me', 'list_messages', 'create_message']));

    const me = await inspector([...base, '--method', 'tools/call', '--tool-name', 'get_me'], env);
    expect(me.code, me.err).toBe(0);
    expect(me.json().structuredContent).toMatchObject({ id: w.owner.id });

    const messages = await inspector(
      [...base, '--method', 'tools/call', '--tool-name', 'list_messages', '--tool-arg', `roomId=${w.roomId}`],
      env,
    );
    expect(messages.code, messages.err).toBe(0);
    expect(messages.json().structuredContent).toMatchObject({ data: [] });
    expect(await mcpRows(t, 'get_me')).toHaveLength(1);
    expect(await mcpRows(t, 'list_messages')).toHaveLength(1);
  });

  it("signs in with OAuth through the guide's registration (its callback is 127.0.0.1:<port>/oauth/callback), lists the tools, and a second run reuses the stored token", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerInspector(t);
    using home = tempHome('svc-inspector-');
    // headless: MCP_AUTO_OPEN_ENABLED=true lets it start OAuth without a terminal; tokens in a file under HOME
    const env = { HOME: home.dir, MCP_AUTO_OPEN_ENABLED: 'true', MCP_INSPECTOR_SECRET_STORE: 'file' };
    // its default callback is http://127.0.0.1:6276/oauth/callback; a free port keeps parallel runs apart
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    const base = [`${t.baseUrl}/mcp`, '--transport', 'http', '--client-id', clientId, '--callback-url', callback];

    const p = startClientProcess(INSPECTOR, ['--cli', ...base, '--method', 'tools/list'], env);
    try {
      const auth = await p.nextUrl(/\/oauth\/authorize\?/);
      expect(Object.fromEntries(auth.searchParams)).toMatchObject({
        client_id: clientId,
        redirect_uri: callback,
        resource: `${t.baseUrl}/mcp`,
        code_challenge_method: 'S256',
      });
      expect(auth.searchParams.get('scope')?.split(' ')).toContain('mcp:tools');
      const back = await consentInBrowser(t, auth, w.member);
      expect(`${back.origin}${back.pathname}`).toBe(callback);
      expect((await fetch(back)).status).toBe(200); // the CLI's listener takes the code
      expect(await p.exited, p.stderr()).toBe(0);
    } finally {
      p.kill();
    }
    expect((JSON.parse(p.stdout()).tools as Array<{ name: string }>).map((x) => x.name)).toContain('get_me');

    const me = await inspector([...base, '--method', 'tools/call', '--tool-name', 'get_me'], env);
    expect(me.code, me.err).toBe(0);
    expect(me.err).not.toMatch(/oauth\/authorize/);
    expect(me.json().structuredContent).toMatchObject({ id: w.member.id });
    const [row] = await mcpRows(t, 'get_me');
    expect(row).toMatchObject({ actor: 'agent', authMethod: 'oauth_bearer', delegatingUserId: w.member.id });
  });
});
