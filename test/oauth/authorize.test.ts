import { describe, expect, it } from 'vitest';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  CALLBACK,
  pkcePair,
  registerClient,
  startOAuthServer,
} from './oauthHelpers.js';

describe('/oauth/authorize', () => {
  it('validates client_id and redirect_uri exactly before any redirect: an error page, never a Location', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const app = await registerClient(t);
    const { challenge } = pkcePair();
    const base = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      scope: 'me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/v1`,
      state: 'xyz',
    };
    const cases: Record<string, string>[] = [
      { ...base, redirect_uri: 'https://evil.example/callback' },
      { ...base, redirect_uri: `${CALLBACK}/` },
      { ...base, redirect_uri: `${CALLBACK}?x=1` },
      { ...base, redirect_uri: CALLBACK.toUpperCase() },
      { ...base, client_id: 'cli_unknown' },
      { ...base, client_id: '' },
    ];
    for (const q of cases) {
      const res = await t.fetch(authorizeUrl(q));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('Invalid authorization request');
    }
    // also when the other parameters are bad too: the redirect_uri check comes first
    const res = await t.fetch(
      authorizeUrl({ ...base, redirect_uri: 'https://evil.example/cb', code_challenge_method: 'plain' }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    // and a repeated redirect_uri is refused the same way
    const twice = await t.fetch(`${authorizeUrl(base)}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    expect(twice.status).toBe(400);
    expect(twice.headers.get('location')).toBeNull();
  });

  it('sends other errors back to the client with error, state and iss', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const app = await registerClient(t, { scopes: ['me:read', 'rooms:read'] });
    const { challenge } = pkcePair();
    const base = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      scope: 'me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/v1`,
      state: 'xyz',
    };
    const cases: [Record<string, string | undefined>, string, string][] = [
      [
        { ...base, code_challenge_method: 'plain' },
        'invalid_request',
        'code_challenge_method must be S256; plain is not supported',
      ],
      [
        { ...base, code_challenge_method: undefined },
        'invalid_request',
        'code_challenge_method must be S256; plain is not supported',
      ],
      [{ ...base, code_challenge: undefined }, 'invalid_request', 'code_challenge is required (PKCE with S256)'],
      [
        { ...base, code_challenge: 'short' },
        'invalid_request',
        'code_challenge must be the base64url SHA-256 of the code_verifier',
      ],
      [{ ...base, resource: undefined }, 'invalid_target', `resource is required: ${t.baseUrl}/v1 or ${t.baseUrl}/mcp`],
      [
        { ...base, resource: 'https://other.example/v1' },
        'invalid_target',
        `resource must be ${t.baseUrl}/v1 or ${t.baseUrl}/mcp`,
      ],
      [
        { ...base, resource: `${t.baseUrl}/v1/` },
        'invalid_target',
        `resource must be ${t.baseUrl}/v1 or ${t.baseUrl}/mcp`,
      ],
      // (asking for more than allowed is granted the allowed part: refused only when nothing is allowed)
      [
        { ...base, scope: 'records:read admin:all' },
        'invalid_scope',
        'The client may not request: records:read admin:all',
      ],
      [{ ...base, response_type: 'token' }, 'unsupported_response_type', 'Only response_type=code is supported'],
      [{ ...base, response_type: undefined }, 'invalid_request', 'response_type is required'],
    ];
    for (const [q, error, description] of cases) {
      const res = await t.fetch(authorizeUrl(q));
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).toBe(CALLBACK);
      expect(Object.fromEntries(to.searchParams)).toEqual({
        error,
        error_description: description,
        state: 'xyz',
        iss: t.baseUrl,
      });
    }
  });

  it('asks to sign in first, then returns to the consent screen; Deny answers access_denied', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const { challenge } = pkcePair();
    const url = authorizeUrl({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      scope: 'me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/mcp`,
      state: 'abc',
    });
    const b = new Browser(t.baseUrl);
    const first = await b.get(url);
    expect(first.status).toBe(302);
    const consentUrl = first.headers.get('location')!;
    expect(consentUrl).toMatch(/^\/oauth\/consent\?request=/);
    const toLogin = await b.get(consentUrl);
    expect(toLogin.status).toBe(302);
    expect(toLogin.headers.get('location')).toBe(`/login?next=${encodeURIComponent(consentUrl)}`);

    const { callback } = await authorizeInBrowser(b, url, { ...w.owner, decision: 'deny' });
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect(Object.fromEntries(callback.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request',
      state: 'abc',
      iss: t.baseUrl,
    });
  });

  it('refuses a consent answer without the CSRF token or with a tampered request', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t);
    const { challenge } = pkcePair();
    const b = new Browser(t.baseUrl);
    await b.signIn(w.owner.email, w.owner.password);
    const a = await b.get(
      authorizeUrl({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: CALLBACK,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: `${t.baseUrl}/v1`,
      }),
    );
    const page = await (await b.get(a.headers.get('location')!)).text();
    // no scope asked: the client's registered scopes are shown
    expect(page).toContain('<dt>agent:invoke</dt>');
    const request = new URL(a.headers.get('location')!, t.baseUrl).searchParams.get('request')!;
    const noCsrf = await b.post('/oauth/consent', { request, decision: 'allow' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.headers.get('location')).toBeNull();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1];
    // the signature's character before the last changed (all six of its bits count), never to what it was
    const forged = `${request.slice(0, -2)}${request.at(-2) === 'x' ? 'y' : 'x'}${request.slice(-1)}`;
    const tampered = await b.post('/oauth/consent', { request: forged, csrf, decision: 'allow' });
    expect(tampered.status).toBe(400);
    expect(tampered.headers.get('location')).toBeNull();
    // a CSRF token of another session does not pass either
    const other = new Browser(t.baseUrl);
    await other.signIn(w.member.email, w.member.password);
    const foreign = await other.post('/oauth/consent', { request, csrf, decision: 'allow' });
    expect(foreign.status).toBe(403);
    // the consent page cannot be framed
    const again = await b.get(a.headers.get('location')!);
    expect(again.headers.get('x-frame-options')).toBe('DENY');
    expect(again.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});
