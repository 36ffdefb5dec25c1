import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { SCOPE_DESCRIPTIONS } from '../../src/domain/scopes.js';
import { call } from '../helpers/harness.js';
import { authorizeInBrowser, Browser, CALLBACK, postForm, registerClient, startOAuthServer } from './oauthHelpers.js';

const TOKEN_SHAPE = {
  access_token: expect.stringMatching(/^svc_at_[A-Za-z0-9_-]{43}$/),
  refresh_token: expect.stringMatching(/^svc_rt_[A-Za-z0-9_-]{43}$/),
  token_type: 'Bearer',
  expires_in: 3600,
};

async function discover(baseUrl: string, clientId: string, auth: client.ClientAuth, secret?: string) {
  return client.discovery(new URL(baseUrl), clientId, secret, auth, {
    execute: [client.allowInsecureRequests],
    algorithm: 'oauth2',
  });
}

async function authorizationUrl(config: client.Configuration, scope: string, resource: string) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope,
    resource,
    state,
    code_challenge_method: 'S256',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
  });
  return { url, verifier, state };
}

describe('OAuth 2.1 with openid-client', () => {
  it('publishes RFC 8414 and RFC 9728 metadata', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const as = await (await t.fetch('/.well-known/oauth-authorization-server')).json();
    expect(as).toMatchObject({
      issuer: t.baseUrl,
      authorization_endpoint: `${t.baseUrl}/oauth/authorize`,
      token_endpoint: `${t.baseUrl}/oauth/token`,
      revocation_endpoint: `${t.baseUrl}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: Object.keys(SCOPE_DESCRIPTIONS),
    });
    for (const surface of ['v1', 'mcp']) {
      const res = await t.fetch(`/.well-known/oauth-protected-resource/${surface}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource: `${t.baseUrl}/${surface}`,
        authorization_servers: [t.baseUrl],
        bearer_methods_supported: ['header'],
        scopes_supported: expect.arrayContaining(['me:read', 'mcp:tools']),
      });
    }
  });

  it('runs discovery, PKCE authorization, code exchange, refresh with rotation, reuse detection and revocation (public client)', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, {
      name: 'Röntgen <Notes> & Co',
      scopes: ['me:read', 'rooms:read', 'messages:write'],
    });
    const config = await discover(t.baseUrl, app.clientId, client.None());
    expect(config.serverMetadata().issuer).toBe(t.baseUrl);

    const { url, verifier, state } = await authorizationUrl(
      config,
      'me:read rooms:read messages:write',
      `${t.baseUrl}/v1`,
    );
    const b = new Browser(t.baseUrl);
    const { consent, callback } = await authorizeInBrowser(b, url.pathname + url.search, w.owner);
    // the consent page names the client and every requested scope with its meaning, escaped
    expect(consent).toContain('Röntgen &lt;Notes&gt; &amp; Co');
    for (const scope of ['me:read', 'rooms:read', 'messages:write'] as const) {
      expect(consent).toContain(`<dt>${scope}</dt><dd>${SCOPE_DESCRIPTIONS[scope]}</dd>`);
    }
    expect(consent).not.toContain('records:read');
    expect(consent).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/);
    expect(consent).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
    expect(callback.searchParams.get('iss')).toBe(t.baseUrl);
    expect(callback.searchParams.get('state')).toBe(state);

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens).toMatchObject({ ...TOKEN_SHAPE, token_type: 'bearer', scope: 'me:read rooms:read messages:write' });
    const me = await call(t, 'GET', '/v1/me', { key: tokens.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: w.owner.id,
      email: w.owner.email,
      name: 'owner',
      locale: 'en',
      organizationId: w.orgId,
      billingContext: 'organization',
    });

    // rotation: every refresh gives a new pair; the old access token keeps working until it expires
    const second = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect(second.access_token).not.toBe(tokens.access_token);
    const third = await client.refreshTokenGrant(config, second.refresh_token!);
    expect((await call(t, 'GET', '/v1/me', { key: third.access_token })).status).toBe(200);

    // reuse of a rotated refresh token revokes the whole family, access tokens included
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'The refresh token was already used; every token of its grant is revoked',
    });
    for (const at of [tokens.access_token, second.access_token, third.access_token]) {
      expect((await call(t, 'GET', '/v1/me', { key: at })).status).toBe(401);
    }
    await expect(client.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('revokes the whole grant when a refresh token is revoked; unknown tokens answer 200 (RFC 7009)', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, { type: 'confidential' });
    const config = await discover(
      t.baseUrl,
      app.clientId,
      client.ClientSecretBasic(app.clientSecret!),
      app.clientSecret!,
    );
    const { url, verifier, state } = await authorizationUrl(config, 'me:read', `${t.baseUrl}/v1`);
    const { callback } = await authorizeInBrowser(new Browser(t.baseUrl), url.pathname + url.search, w.owner);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens).toMatchObject({ ...TOKEN_SHAPE, token_type: 'bearer', scope: 'me:read' });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);

    await client.tokenRevocation(config, refreshed.refresh_token!);
    expect((await call(t, 'GET', '/v1/me', { key: tokens.access_token })).status).toBe(401);
    expect((await call(t, 'GET', '/v1/me', { key: refreshed.access_token })).status).toBe(401);
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    await client.tokenRevocation(config, 'svc_rt_unknown');
    const basic = `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`;
    const r = await postForm(t, '/oauth/revoke', { token: 'nothing-like-a-token' }, { authorization: basic });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('revoking an access token ends only that token', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, { type: 'confidential' });
    const config = await discover(
      t.baseUrl,
      app.clientId,
      client.ClientSecretPost(app.clientSecret!),
      app.clientSecret!,
    );
    const { url, verifier, state } = await authorizationUrl(config, 'me:read', `${t.baseUrl}/v1`);
    const { callback } = await authorizeInBrowser(new Browser(t.baseUrl), url.pathname + url.search, w.owner);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    await client.tokenRevocation(config, tokens.access_token, { token_type_hint: 'access_token' });
    expect((await call(t, 'GET', '/v1/me', { key: tokens.access_token })).status).toBe(401);
    const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await call(t, 'GET', '/v1/me', { key: next.access_token })).status).toBe(200);
  });
});
