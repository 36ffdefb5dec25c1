import { describe, expect, it } from 'vitest';
import { call } from '../helpers/harness.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  CALLBACK,
  obtainTokens,
  pkcePair,
  postForm,
  registerClient,
  startOAuthServer,
} from '../oauth/oauthHelpers.js';

// Attacks on the OAuth 2.1 authorization server, each refused. test/oauth/ has the full behaviour.

type Env = Awaited<ReturnType<typeof startOAuthServer>>;

const authorizeParams = (env: Env, clientId: string, extra: Record<string, string | undefined> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: CALLBACK,
  scope: 'me:read',
  code_challenge: pkcePair().challenge,
  code_challenge_method: 'S256',
  resource: `${env.t.baseUrl}/v1`,
  state: 'st',
  ...extra,
});

async function freshCode(env: Env, clientId: string) {
  const { verifier, challenge } = pkcePair();
  const { callback } = await authorizeInBrowser(
    new Browser(env.t.baseUrl),
    authorizeUrl(authorizeParams(env, clientId, { code_challenge: challenge })),
    env.w.owner,
  );
  return { code: callback.searchParams.get('code')!, verifier };
}

const exchange = (env: Env, fields: Record<string, string>) =>
  postForm(env.t, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: CALLBACK, ...fields });

describe('security: OAuth', () => {
  it('open redirect through redirect_uri: anything but the exact registered string gets a 400 page, never a Location', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const spoofs = [
      'https://evil.example/callback',
      `${CALLBACK}/`,
      `${CALLBACK}?next=https://evil.example`,
      `${CALLBACK}#x`,
      CALLBACK.toUpperCase(),
      'http://127.0.0.1:53682/callback/../evil',
      'http://127.0.0.1:53682@evil.example/callback',
      'http://127.0.0.1.evil.example:53682/callback',
    ];
    for (const redirect_uri of spoofs) {
      // the other parameters are wrong too: the redirect_uri is checked first, before anything could redirect
      const res = await env.t.fetch(
        authorizeUrl(authorizeParams(env, app.clientId, { redirect_uri, code_challenge_method: 'plain' })),
      );
      expect(res.status, redirect_uri).toBe(400);
      expect(res.headers.get('location'), redirect_uri).toBeNull();
    }
    const twice = await env.t.fetch(
      `${authorizeUrl(authorizeParams(env, app.clientId))}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    );
    expect(twice.status).toBe(400);
    expect(twice.headers.get('location')).toBeNull();
  });

  it('PKCE downgrade: code_challenge_method=plain, or no challenge at all, is refused', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    for (const extra of [
      { code_challenge_method: 'plain' },
      { code_challenge: undefined },
      { code_challenge_method: undefined },
    ]) {
      const res = await env.t.fetch(authorizeUrl(authorizeParams(env, app.clientId, extra)));
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).toBe(CALLBACK);
      expect(to.searchParams.get('error')).toBe('invalid_request');
      expect(to.searchParams.get('code')).toBeNull();
    }
    const meta: any = await (await env.t.fetch('/.well-known/oauth-authorization-server')).json();
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('stolen code without the verifier, or with a plain verifier: invalid_grant', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const { code } = await freshCode(env, app.clientId);
    const stolen = await exchange(env, { code, client_id: app.clientId, code_verifier: pkcePair().verifier });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    const none = await exchange(env, { code, client_id: app.clientId });
    expect(none.status).toBe(400);
  });

  it('authorization code replay: the second exchange fails and revokes every token the first one issued', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const { code, verifier } = await freshCode(env, app.clientId);
    const first = await exchange(env, { code, code_verifier: verifier, client_id: app.clientId });
    expect(first.status).toBe(200);
    expect((await call(env.t, 'GET', '/v1/me', { key: first.body.access_token })).status).toBe(200);
    const replay = await exchange(env, { code, code_verifier: verifier, client_id: app.clientId });
    expect(replay.body.error).toBe('invalid_grant');
    expect((await call(env.t, 'GET', '/v1/me', { key: first.body.access_token })).status).toBe(401);
    const refresh = await postForm(env.t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: app.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refresh token replay: presenting a rotated refresh token revokes the whole family, access tokens included', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    const first = await obtainTokens(env.t, env.w, app);
    const rotate = (refresh_token: string) =>
      postForm(env.t, '/oauth/token', { grant_type: 'refresh_token', refresh_token, client_id: app.clientId });
    const second = await rotate(first.refresh_token);
    expect(second.status).toBe(200);
    const reuse = await rotate(first.refresh_token);
    expect(reuse.body.error).toBe('invalid_grant');
    // the thief's replay took the legitimate holder down too: the family is over
    expect((await call(env.t, 'GET', '/v1/me', { key: second.body.access_token })).status).toBe(401);
    expect((await rotate(second.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('code injection across clients: a code is bound to its client, redirect_uri and resource', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t, { redirectUris: [CALLBACK, 'https://app.example/cb'] });
    const other = await registerClient(env.t);
    const { code, verifier } = await freshCode(env, app.clientId);
    expect((await exchange(env, { code, code_verifier: verifier, client_id: other.clientId })).body.error).toBe(
      'invalid_grant',
    );
    expect(
      (
        await exchange(env, {
          code,
          code_verifier: verifier,
          client_id: app.clientId,
          redirect_uri: 'https://app.example/cb',
        })
      ).body.error,
    ).toBe('invalid_grant');
    expect(
      (
        await exchange(env, {
          code,
          code_verifier: verifier,
          client_id: app.clientId,
          resource: `${env.t.baseUrl}/mcp`,
        })
      ).body.error,
    ).toBe('invalid_target');
  });

  it('audience confusion at issue: a missing or foreign resource gets invalid_target, no code', async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t);
    for (const resource of [undefined, 'https://other.example/v1', `${env.t.baseUrl}/v1/`, `${env.t.baseUrl}`]) {
      const res = await env.t.fetch(authorizeUrl(authorizeParams(env, app.clientId, { resource })));
      const to = new URL(res.headers.get('location')!);
      expect(to.searchParams.get('error'), String(resource)).toBe('invalid_target');
    }
  });

  it("scope escalation: asking beyond the client's registered scopes is cut to them, widening on refresh is refused", async () => {
    await using env = await startOAuthServer();
    const app = await registerClient(env.t, { scopes: ['me:read', 'rooms:read'] });
    const res = await env.t.fetch(authorizeUrl(authorizeParams(env, app.clientId, { scope: 'webhooks:write' })));
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    const cut = await obtainTokens(env.t, env.w, app, { scope: 'me:read webhooks:write' });
    expect(cut.scope).toBe('me:read');
    const tokens = await obtainTokens(env.t, env.w, app, { scope: 'me:read' });
    const widen = await postForm(env.t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: app.clientId,
      scope: 'me:read rooms:read',
    });
    expect(widen.status).toBe(400);
    expect(widen.body.error).toBe('invalid_scope');
  });

  it('client impersonation: a confidential client without its secret, or with a wrong one, gets invalid_client', async () => {
    await using env = await startOAuthServer();
    const conf = await registerClient(env.t, { type: 'confidential' });
    const { code, verifier } = await freshCode(env, conf.clientId);
    const none = await exchange(env, { code, code_verifier: verifier, client_id: conf.clientId });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_client');
    const wrong = await exchange(env, {
      code,
      code_verifier: verifier,
      client_id: conf.clientId,
      client_secret: 'svc_cs_guess',
    });
    expect(wrong.body.error).toBe('invalid_client');
    const basic = await postForm(
      env.t,
      '/oauth/token',
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK },
      {
        authorization: `Basic ${Buffer.from(`${conf.clientId}:wrong`).toString('base64')}`,
      },
    );
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('open redirect after sign-in: /login returns only to same-origin paths', async () => {
    await using env = await startOAuthServer();
    for (const next of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      '/%0d%0aLocation:%20https://evil.example',
    ]) {
      const b = new Browser(env.t.baseUrl);
      const res = await b.signIn(env.w.owner.email, env.w.owner.password, next);
      expect(res.status, next).toBe(303);
      const location = res.headers.get('location')!;
      expect(
        location.startsWith('/') && !location.startsWith('//') && !location.includes('\\'),
        `${next} → ${location}`,
      ).toBe(true);
      expect(new URL(location, env.t.baseUrl).origin).toBe(env.t.baseUrl);
      expect(location).not.toMatch(/[\r\n]/);
    }
  });
});
