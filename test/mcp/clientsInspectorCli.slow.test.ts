import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { inTransaction } from '../../db/transaction.js';
import { ALL_SCOPES, createWorld, issueKey, startTestServer, type TestServer } from '../helpers/harness.js';
import { consentInBrowser } from './browserConsent.js';
import { freePort, startClientProcess, tempHome, tokensByHand } from './clientsProcess.js';

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

  it('--strict finds no schema a host could refuse in the whole tool list (no type arrays, nothing untyped)', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // every scope, agent:invoke included: every tool a key can be shown
    const all = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    using home = tempHome('svc-inspector-');
    const base = [`${t.baseUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${all}`];
    const list = await inspector([...base, '--method', 'tools/list', '--strict', '--format', 'json'], {
      HOME: home.dir,
    });
    expect(list.code, list.err).toBe(0);
    const out = list.json();
    expect(out.result.tools.length).toBeGreaterThanOrEqual(40);
    // findings (errors and warnings alike) come as `schemaFindings` and a report on stderr; there are none
    expect(out.schemaFindings).toBeUndefined();
    expect(list.err).not.toMatch(/Warning|Error|portability/);
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

  it('on a step-up (403 insufficient_scope) it asks "Proceed with step-up authorization? [y/N]" and, answered y, sends the user to authorize the held and challenged scopes; a tool the token cannot call is not listed, so it is never called', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerInspector(t);
    using home = tempHome('svc-inspector-');
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    // a server entry asking for less than /mcp needs (no mcp:tools): its token is challenged on every request
    const config = path.join(home.dir, 'mcp.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          svc: { type: 'streamable-http', url: `${t.baseUrl}/mcp`, oauth: { clientId, scopes: 'me:read' } },
        },
      }),
    );
    const env = { HOME: home.dir, MCP_AUTO_OPEN_ENABLED: 'true', MCP_INSPECTOR_SECRET_STORE: 'file' };
    const args = ['--cli', '--config', config, '--server', 'svc', '--callback-url', callback, '--method', 'tools/call'];

    // 1. the sign-in it starts itself grants me:read; the connect that follows is challenged and the run stops
    const first = startClientProcess(INSPECTOR, [...args, '--tool-name', 'get_me'], env);
    try {
      const auth = await first.nextUrl(/\/oauth\/authorize\?/);
      expect(auth.searchParams.get('scope')).toBe('me:read');
      expect((await fetch(await consentInBrowser(t, auth, w.member))).status).toBe(200);
      expect(await first.exited).toBe(1);
    } finally {
      first.kill();
    }
    expect(first.stderr()).toContain('Interactive auth recovery required');
    const [refused] = await listAudit(t.rt.services, { limit: 1 });
    expect(refused).toMatchObject({ surface: 'mcp', statusCode: 403, errorCode: 'insufficient_scope' });

    // 2. the next run, holding that token, asks before stepping up, then signs in for the union of scopes
    const second = startClientProcess(INSPECTOR, [...args, '--tool-name', 'get_me'], env);
    try {
      // the answer waits in the pipe until it asks: a reply written after the prompt would race its 5 s limit
      second.write('y\n');
      await second.waitFor('This operation needs additional scope: mcp:tools.');
      await second.waitFor('Proceed with step-up authorization? [y/N]');
      const again = await second.nextUrl(/\/oauth\/authorize\?/);
      expect(again.searchParams.get('scope')?.split(' ').sort()).toEqual(['mcp:tools', 'me:read']);
      expect((await fetch(await consentInBrowser(t, again, w.member))).status).toBe(200);
      expect(await second.exited, second.stderr()).toBe(0);
    } finally {
      second.kill();
    }
    expect(JSON.parse(second.stdout()).structuredContent).toMatchObject({ id: w.member.id });

    // 3. create_message needs messages:write, which the token lacks: tools/list hides it, and the CLI, which
    //    checks the name against the list first, reports it unknown without calling it (so no step-up)
    const hidden = await inspector(
      [...args.slice(1), '--tool-name', 'create_message', '--tool-arg', `roomId=${w.roomId}`, 'body=x'],
      env,
    );
    expect(hidden.code).not.toBe(0);
    expect(hidden.err).toContain("Tool 'create_message' not found on server.");
    expect(hidden.err).not.toMatch(/oauth\/authorize/);
    expect(await mcpRows(t, 'create_message')).toHaveLength(0);
  });

  it('with a token of /v1 in the header it reports the 403 invalid_audience (exit 3, auth_required) and starts no sign-in', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const clientId = await registerInspector(t);
    using home = tempHome('svc-inspector-');
    const rest = await tokensByHand(t, {
      clientId,
      redirectUri: 'http://127.0.0.1:5555/oauth/callback',
      user: w.member,
      resource: `${t.baseUrl}/v1`,
      scope: 'mcp:tools me:read',
    });
    const r = await inspector(
      [`${t.baseUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${rest.access_token}`].concat([
        '--method',
        'tools/list',
      ]),
      { HOME: home.dir, MCP_AUTO_OPEN_ENABLED: 'true' },
    );
    expect(r.code).toBe(3);
    const { error } = JSON.parse(r.err.trim().split('\n').at(-1)!);
    expect(error).toMatchObject({ code: 'auth_required', status: 403 });
    expect(error.message).toContain('invalid_audience');
    expect(r.err).not.toMatch(/oauth\/authorize/);
  });
});
