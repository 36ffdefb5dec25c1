import { describe, expect, it } from 'vitest';
import { redirectUriMatches } from '../../src/oauth/clientRegistry.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  pkcePair,
  postForm,
  registerClient,
  startOAuthServer,
} from './oauthHelpers.js';

describe('loopback redirect URIs', () => {
  it('matches 127.0.0.1 and [::1] on any port, everything else exactly', () => {
    const reg = [
      'http://127.0.0.1:8976/callback',
      'http://[::1]/cb',
      'http://localhost:6274/oauth/callback',
      'https://app.example/cb',
    ];
    for (const ok of [
      'http://127.0.0.1:8976/callback',
      'http://127.0.0.1:51234/callback',
      'http://127.0.0.1/callback',
      'http://[::1]:4000/cb',
    ]) {
      expect(redirectUriMatches(reg, ok), ok).toBe(true);
    }
    for (const bad of [
      'http://127.0.0.1:51234/other',
      'http://127.0.0.1:51234/callback?x=1',
      'http://127.0.0.2:8976/callback',
      'https://127.0.0.1:8976/callback',
      'http://localhost:9999/oauth/callback',
      'https://app.example:8443/cb',
      'http://[::1]:4000/cb/',
      'http://127.0.0.1:5000/./callback',
      'http://user@127.0.0.1:5000/callback',
      'http://127.0.0.1:5000/callback#f',
    ]) {
      expect(redirectUriMatches(reg, bad), bad).toBe(false);
    }
  });

  it('a native client registered on 127.0.0.1 finishes the flow from an ephemeral port; localhost stays exact', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, {
      redirectUris: ['http://127.0.0.1:8976/callback', 'http://localhost:6274/oauth/callback'],
    });
    const { verifier, challenge } = pkcePair();
    const redirect = 'http://127.0.0.1:49999/callback';
    const q = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: redirect,
      scope: 'me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/v1`,
      state: 's1',
    };
    const { callback } = await authorizeInBrowser(new Browser(t.baseUrl), authorizeUrl(q), w.member);
    expect(callback.origin + callback.pathname).toBe(redirect);
    const code = callback.searchParams.get('code')!;
    // the token request must name the same redirect_uri as the authorization request (the port included)
    const other = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:8976/callback',
    });
    expect(other.body.error).toBe('invalid_grant');
    const { verifier: v2, challenge: c2 } = pkcePair();
    const again = await authorizeInBrowser(
      new Browser(t.baseUrl),
      authorizeUrl({ ...q, code_challenge: c2 }),
      w.member,
    );
    const tok = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: again.callback.searchParams.get('code')!,
      code_verifier: v2,
      client_id: app.clientId,
      redirect_uri: redirect,
    });
    expect(tok.status).toBe(200);

    const localhostOtherPort = await t.fetch(
      authorizeUrl({ ...q, redirect_uri: 'http://localhost:7000/oauth/callback' }),
    );
    expect(localhostOtherPort.status).toBe(400);
    expect(localhostOtherPort.headers.get('location')).toBeNull();
  });
});

describe('the scope handshake', () => {
  it('the 401 challenge on /mcp names the scopes a client asks for to start', async () => {
    await using env = await startOAuthServer();
    const r = await postMcp(env.t, toolCall('get_me'));
    expect(r.status).toBe(401);
    const challenge = r.headers.get('www-authenticate')!;
    const scope = /scope="([^"]+)"/.exec(challenge)![1].split(' ');
    expect(scope[0]).toBe('mcp:tools');
    expect(scope).toEqual(expect.arrayContaining(['me:read', 'messages:read', 'messages:write', 'rooms:read']));
    expect(challenge).toContain(`resource_metadata="${env.t.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('asking for more than the client may have is granted the allowed part: consent and token response say exactly that', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, { scopes: ['mcp:tools', 'me:read', 'rooms:read'] });
    const { verifier, challenge } = pkcePair();
    const q = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:53682/callback',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/mcp`,
      state: 's',
      scope: 'mcp:tools me:read messages:write offline_access',
    };
    const { consent, callback } = await authorizeInBrowser(new Browser(t.baseUrl), authorizeUrl(q), w.member);
    const shown = [...consent.matchAll(/<dt>([^<]+)<\/dt>/g)].map((m) => m[1]);
    expect(shown).toEqual(['mcp:tools', 'me:read']);
    const tok = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:53682/callback',
    });
    expect(tok.status).toBe(200);
    expect(tok.body.scope).toBe('mcp:tools me:read');

    // a tool beyond the grant: the step-up challenge names the scope it needs
    const step = await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'x' }), {
      token: tok.body.access_token,
    });
    expect(step.status).toBe(403);
    expect(step.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:tools messages:write me:read", resource_metadata="/,
    );

    // nothing of what was asked is allowed: still invalid_scope
    const none = await t.fetch(authorizeUrl({ ...q, scope: 'messages:write webhooks:write' }));
    const to = new URL(none.headers.get('location')!);
    expect(to.searchParams.get('error')).toBe('invalid_scope');
    expect(to.searchParams.get('error_description')).toBe('The client may not request: messages:write webhooks:write');
  });
});

describe('CORS for browser-based clients', () => {
  const preflight = (method: string) => ({
    method: 'OPTIONS',
    headers: {
      origin: 'http://localhost:6274',
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
    },
  });

  it('answers preflights and requests of discovery, token and revocation with any origin, without credentials', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    for (const [path, method] of [
      ['/oauth/token', 'POST'],
      ['/oauth/revoke', 'POST'],
      ['/.well-known/oauth-authorization-server', 'GET'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET'],
      ['/.well-known/oauth-protected-resource/v1', 'GET'],
    ] as const) {
      const pre = await t.fetch(path, preflight(method));
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(pre.headers.get('access-control-allow-credentials'), path).toBeNull();
      expect(pre.headers.get('access-control-allow-methods'), path).toContain(method);
      const allowed = pre.headers
        .get('access-control-allow-headers')!
        .toLowerCase()
        .split(',')
        .map((h) => h.trim());
      expect(allowed, path).toEqual(expect.arrayContaining(['authorization', 'content-type', 'mcp-protocol-version']));
    }
    const token = await postForm(
      t,
      '/oauth/token',
      { grant_type: 'authorization_code', client_id: 'cli_nobody' },
      { origin: 'http://localhost:6274' },
    );
    expect(token.status).toBe(401);
    expect(token.headers.get('access-control-allow-origin')).toBe('*');
    const revoke = await postForm(
      t,
      '/oauth/revoke',
      { token: 'x', client_id: 'cli_nobody' },
      { origin: 'http://localhost:6274' },
    );
    expect(revoke.headers.get('access-control-allow-origin')).toBe('*');
    const meta = await t.fetch('/.well-known/oauth-protected-resource/mcp', {
      headers: { origin: 'http://localhost:6274' },
    });
    expect(meta.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('never on /oauth/authorize or the pages', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    for (const path of ['/oauth/authorize?client_id=x', '/oauth/consent', '/login', '/settings/developer']) {
      const r = await t.fetch(path, { headers: { origin: 'http://localhost:6274' } });
      expect(r.headers.get('access-control-allow-origin'), path).toBeNull();
      const pre = await t.fetch(path.split('?')[0], preflight('GET'));
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull();
    }
  });
});
