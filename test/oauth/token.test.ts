import { describe, expect, it } from 'vitest';
import { purgeExpiredOAuth } from '../../src/oauth/purgeExpiredOAuth.js';
import { call } from '../helpers/harness.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  bearer,
  Browser,
  CALLBACK,
  obtainTokens,
  pkcePair,
  postForm,
  registerClient,
  startOAuthServer,
} from './oauthHelpers.js';
import type { TestServer, World } from '../helpers/harness.js';

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
});

/** Authorizes once and returns a fresh code with its verifier (not yet exchanged). */
async function freshCode(t: TestServer, w: World, clientId: string) {
  const { verifier, challenge } = pkcePair();
  const { callback } = await authorizeInBrowser(
    new Browser(t.baseUrl),
    authorizeUrl({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      scope: 'me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/v1`,
    }),
    w.owner,
  );
  return { code: callback.searchParams.get('code')!, verifier };
}

const exchange = (t: TestServer, o: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(t, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: CALLBACK, ...o }, headers);

describe('/oauth/token', () => {
  it('answers the exact token response with Cache-Control: no-store', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const { code, verifier } = await freshCode(t, w, app.clientId);
    const r = await exchange(t, { code, code_verifier: verifier, client_id: app.clientId });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(r.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(r.body).toEqual({
      access_token: expect.stringMatching(/^svc_at_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^svc_rt_[A-Za-z0-9_-]{43}$/),
      scope: 'me:read',
    });
    // only hashes are stored
    const rows = await t.rt.ds.query('SELECT "tokenHash" FROM "oauth_tokens"');
    expect(JSON.stringify(rows)).not.toContain(r.body.access_token);
    expect(JSON.stringify(rows)).not.toContain(r.body.refresh_token);
  });

  it("rejects a wrong verifier, a wrong redirect_uri, an expired code and another client's code with invalid_grant", async () => {
    await using env = await startOAuthServer();
    const { t, w, clock } = env;
    const app = await registerClient(t, { redirectUris: [CALLBACK, 'https://app.example/cb'] });
    const other = await registerClient(t);
    const { code, verifier } = await freshCode(t, w, app.clientId);

    const wrongVerifier = await exchange(t, { code, code_verifier: pkcePair().verifier, client_id: app.clientId });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge',
    });
    expect(wrongVerifier.headers.get('cache-control')).toBe('no-store');

    const wrongRedirect = await exchange(t, {
      code,
      code_verifier: verifier,
      client_id: app.clientId,
      redirect_uri: 'https://app.example/cb',
    });
    expect(wrongRedirect.body).toEqual({
      error: 'invalid_grant',
      error_description: 'redirect_uri does not match the authorization request',
    });

    const otherClient = await exchange(t, { code, code_verifier: verifier, client_id: other.clientId });
    expect(otherClient.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code is invalid',
    });

    const wrongResource = await exchange(t, {
      code,
      code_verifier: verifier,
      client_id: app.clientId,
      resource: `${t.baseUrl}/mcp`,
    });
    expect(wrongResource.body).toEqual({
      error: 'invalid_target',
      error_description: 'resource does not match the authorization request',
    });

    clock.advance(61_000);
    const expired = await exchange(t, { code, code_verifier: verifier, client_id: app.clientId });
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'The authorization code has expired' });

    const unknown = await exchange(t, { code: 'not-a-code', code_verifier: verifier, client_id: app.clientId });
    expect(unknown.body).toEqual({ error: 'invalid_grant', error_description: 'The authorization code is invalid' });
  });

  it('a reused code gives invalid_grant and revokes everything it issued', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const { code, verifier } = await freshCode(t, w, app.clientId);
    const first = await exchange(t, { code, code_verifier: verifier, client_id: app.clientId });
    expect(first.status).toBe(200);
    expect((await call(t, 'GET', '/v1/me', { key: first.body.access_token })).status).toBe(200);

    const again = await exchange(t, { code, code_verifier: verifier, client_id: app.clientId });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code was already used; the tokens issued for it are revoked',
    });
    expect((await call(t, 'GET', '/v1/me', { key: first.body.access_token })).status).toBe(401);
    const refresh = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: app.clientId,
    });
    expect(refresh.body).toEqual({ error: 'invalid_grant', error_description: 'The refresh token was revoked' });
  });

  it('concurrent uses of one code or one refresh token: exactly one wins, the other is treated as reuse', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const { code, verifier } = await freshCode(t, w, app.clientId);
    const exchanges = await Promise.all(
      [1, 2].map(() => exchange(t, { code, code_verifier: verifier, client_id: app.clientId })),
    );
    expect(exchanges.map((r) => r.status).sort()).toEqual([200, 400]);
    const won = exchanges.find((r) => r.status === 200)!;
    expect((await call(t, 'GET', '/v1/me', { key: won.body.access_token })).status).toBe(401);

    const tokens = await obtainTokens(t, w, app);
    const refreshes = await Promise.all(
      [1, 2].map(() =>
        postForm(t, '/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: app.clientId,
        }),
      ),
    );
    expect(refreshes.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(refreshes.find((r) => r.status === 400)!.body.error).toBe('invalid_grant');
    const rotated = refreshes.find((r) => r.status === 200)!;
    expect((await call(t, 'GET', '/v1/me', { key: rotated.body.access_token })).status).toBe(401);
  });

  it('authenticates confidential clients by client_secret_basic or client_secret_post, and nothing else', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, { type: 'confidential' });
    const secret = app.clientSecret!;
    expect(secret).toMatch(/^svc_cs_[A-Za-z0-9_-]{43}$/);

    let { code, verifier } = await freshCode(t, w, app.clientId);
    const wrongBasic = await exchange(t, { code, code_verifier: verifier }, basic(app.clientId, `${secret}x`));
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    expect(wrongBasic.headers.get('www-authenticate')).toBe('Basic realm="svc"');

    const wrongPost = await exchange(t, {
      code,
      code_verifier: verifier,
      client_id: app.clientId,
      client_secret: 'nope',
    });
    expect(wrongPost.status).toBe(401);
    expect(wrongPost.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    expect(wrongPost.headers.get('www-authenticate')).toBeNull();

    const none = await exchange(t, { code, code_verifier: verifier, client_id: app.clientId });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication is required' });

    const both = await exchange(
      t,
      { code, code_verifier: verifier, client_secret: secret },
      basic(app.clientId, secret),
    );
    expect(both.body).toEqual({
      error: 'invalid_request',
      error_description: 'Use one client authentication method, not several',
    });

    const unknown = await exchange(t, { code, code_verifier: verifier }, basic('cli_nobody', secret));
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });

    const viaBasic = await exchange(t, { code, code_verifier: verifier }, basic(app.clientId, secret));
    expect(viaBasic.status).toBe(200);

    ({ code, verifier } = await freshCode(t, w, app.clientId));
    const viaPost = await exchange(t, {
      code,
      code_verifier: verifier,
      client_id: app.clientId,
      client_secret: secret,
    });
    expect(viaPost.status).toBe(200);

    const refresh = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: viaPost.body.refresh_token,
      client_id: app.clientId,
    });
    expect(refresh.status).toBe(401);
    expect(refresh.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication is required' });
  });

  it('answers malformed requests in RFC 6749 form', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const app = await registerClient(t);
    expect((await postForm(t, '/oauth/token', { client_id: app.clientId })).body).toEqual({
      error: 'invalid_request',
      error_description: 'grant_type is required',
    });
    expect((await postForm(t, '/oauth/token', { client_id: app.clientId, grant_type: 'password' })).body).toEqual({
      error: 'unsupported_grant_type',
      error_description: 'grant_type must be authorization_code or refresh_token',
    });
    expect(
      (await postForm(t, '/oauth/token', { client_id: app.clientId, grant_type: 'client_credentials' })).status,
    ).toBe(400);
    expect(
      (await postForm(t, '/oauth/token', { client_id: app.clientId, grant_type: 'authorization_code' })).body,
    ).toEqual({ error: 'invalid_request', error_description: 'code is required' });
    expect((await postForm(t, '/oauth/token', { grant_type: 'authorization_code' })).body).toEqual({
      error: 'invalid_client',
      error_description: 'Client authentication is required',
    });

    const json = await t.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The request body must be application/x-www-form-urlencoded',
    });

    const repeated = await t.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${app.clientId}&grant_type=refresh_token&grant_type=authorization_code`,
    });
    expect(await repeated.json()).toEqual({ error: 'invalid_request', error_description: 'grant_type is repeated' });

    const huge = await t.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `code=${'a'.repeat(100_000)}`,
    });
    expect(huge.status).toBe(400);
    expect(await huge.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The request body could not be read',
    });
  });

  it("checks each grant's parameters in one order: a repeated one first, then the missing ones in turn (grants table)", async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const app = await registerClient(t);
    const raw = async (body: string) =>
      (
        await t.fetch('/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `client_id=${app.clientId}&${body}`,
        })
      ).json();
    const refused = (description: string) => ({ error: 'invalid_request', error_description: description });
    // authorization_code: code, redirect_uri, code_verifier are required, in that order; resource is read too
    expect(await raw('grant_type=authorization_code&code=c&redirect_uri=x')).toEqual(
      refused('code_verifier is required (PKCE)'),
    );
    expect(await raw('grant_type=authorization_code&code=c&code_verifier=v')).toEqual(
      refused('redirect_uri is required'),
    );
    expect(await raw('grant_type=authorization_code&code=&redirect_uri=x&code_verifier=v')).toEqual(
      refused('code is required'),
    );
    expect(await raw('grant_type=authorization_code&resource=a&resource=b')).toEqual(refused('resource is repeated'));
    expect(await raw('grant_type=authorization_code&code_verifier=v&code_verifier=w')).toEqual(
      refused('code_verifier is repeated'),
    );
    // refresh_token: only refresh_token is checked first; scope and resource rank after the token's own checks
    expect(await raw('grant_type=refresh_token')).toEqual(refused('refresh_token is required'));
    expect(await raw('grant_type=refresh_token&refresh_token=a&refresh_token=b')).toEqual(
      refused('refresh_token is repeated'),
    );
    expect(await raw('grant_type=refresh_token&refresh_token=svc_rt_unknown&scope=a&scope=b')).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid',
    });
  });

  it('refresh: narrows scope on request, refuses broader scope, ends 30 days after the family start', async () => {
    await using env = await startOAuthServer();
    const { t, w, clock } = env;
    const app = await registerClient(t);
    const tokens = await obtainTokens(t, w, app, { scope: 'me:read rooms:read' });
    const refresh = (rt: string, extra: Record<string, string> = {}) =>
      postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: rt,
        client_id: app.clientId,
        ...extra,
      });

    const broader = await refresh(tokens.refresh_token, { scope: 'me:read messages:read' });
    expect(broader.body).toEqual({
      error: 'invalid_scope',
      error_description: 'scope must be within the scopes originally granted',
    });

    const narrowed = await refresh(tokens.refresh_token, { scope: 'me:read' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('me:read');
    const rooms = await call(t, 'GET', '/v1/rooms', { key: narrowed.body.access_token });
    expect(rooms.status).toBe(403);
    expect(rooms.body.error.code).toBe('insufficient_scope');
    // the refresh token keeps the whole grant
    const full = await refresh(narrowed.body.refresh_token);
    expect(full.body.scope).toBe('me:read rooms:read');

    clock.advance(29 * 24 * 3600_000);
    const late = await refresh(full.body.refresh_token);
    expect(late.status).toBe(200);
    clock.advance(24 * 3600_000 + 1000);
    const expired = await refresh(late.body.refresh_token);
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'The refresh token has expired' });

    // a day after the family ended, housekeeping deletes what is left of it
    clock.advance(24 * 3600_000);
    expect(await purgeExpiredOAuth(t.rt.services)).toBeGreaterThan(0);
    for (const table of ['oauth_codes', 'oauth_tokens', 'oauth_grants']) {
      expect(await t.rt.ds.query(`SELECT "id" FROM "${table}"`)).toEqual([]);
    }
  });

  it('access tokens expire after one hour', async () => {
    await using env = await startOAuthServer();
    const { t, w, clock } = env;
    const app = await registerClient(t);
    const tokens = await obtainTokens(t, w, app);
    clock.advance(3599_000);
    expect((await t.fetch('/v1/me', { headers: bearer(tokens.access_token) })).status).toBe(200);
    clock.advance(2000);
    expect((await t.fetch('/v1/me', { headers: bearer(tokens.access_token) })).status).toBe(401);
  });
});
