import { describe, expect, it } from 'vitest';
import { html, raw } from '../../src/web/html.js';
import { DEFAULT_AFTER_LOGIN, safeNext } from '../../src/web/safeNext.js';
import { call } from '../helpers/harness.js';
import { Browser, field, obtainTokens, registerClient, startOAuthServer } from './oauthHelpers.js';

describe('sign-in pages', () => {
  it('/login has inputs labelled Email and Password and a Sign in button; signing in sets a locked-down cookie', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    const res = await b.get('/login');
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toMatch(/<label for="email">Email<\/label>\s*<input id="email" name="email" type="email"/);
    expect(page).toMatch(
      /<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/,
    );
    expect(page).toContain('<button type="submit">Sign in</button>');
    expect(field(page, 'csrf')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const signed = await b.post('/login', {
      csrf: field(page, 'csrf'),
      next: '/settings/apps',
      email: w.owner.email.toUpperCase(),
      password: w.owner.password,
    });
    expect(signed.status).toBe(303);
    expect(signed.headers.get('location')).toBe('/settings/apps');
    const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).not.toMatch(/; Secure/i);
    expect((await b.get('/settings/apps')).status).toBe(200);
  });

  it('marks cookies Secure when BASE_URL is https', async () => {
    await using env = await startOAuthServer({ BASE_URL: 'https://svc.example' });
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    const first = await b.get('/login');
    expect(first.headers.getSetCookie().find((c) => c.startsWith('svc_csrf='))).toMatch(/; Secure/i);
    const signed = await b.signIn(w.owner.email, w.owner.password);
    expect(signed.status).toBe(303);
    expect(signed.headers.getSetCookie().find((c) => c.startsWith('svc_session='))).toMatch(/; Secure/i);
  });

  it('refuses a sign-in without a valid CSRF token or from another origin', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    const page = await (await b.get('/login')).text();
    const noToken = await b.post('/login', { email: w.owner.email, password: w.owner.password });
    expect(noToken.status).toBe(403);
    expect(noToken.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(false);
    const stranger = new Browser(t.baseUrl);
    const foreign = await stranger.post('/login', {
      csrf: field(page, 'csrf'),
      email: w.owner.email,
      password: w.owner.password,
    });
    expect(foreign.status).toBe(403);
    const crossOrigin = await b.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({
        csrf: field(page, 'csrf'),
        email: w.owner.email,
        password: w.owner.password,
      }).toString(),
    });
    expect(crossOrigin.status).toBe(403);
  });

  it('throttles failed sign-ins per email and address', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    for (let i = 0; i < 5; i++) {
      const r = await b.signIn(w.owner.email, 'wrong-password');
      expect(r.status).toBe(401);
      expect(await r.text()).toContain('Email or password is incorrect.');
    }
    const blocked = await b.signIn(w.owner.email, w.owner.password);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await blocked.text()).toContain('Too many failed sign-in attempts');
    // another account from the same address is not blocked by this one
    expect((await new Browser(t.baseUrl).signIn(w.member.email, w.member.password)).status).toBe(303);
    // unknown emails are refused the same way
    expect((await b.signIn('nobody@example.test', 'whatever-password')).status).toBe(401);
  });

  it('returns only to same-origin paths after sign-in', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    for (const [next, expected] of [
      ['/oauth/consent?request=abc', '/oauth/consent?request=abc'],
      ['//evil.example/x', DEFAULT_AFTER_LOGIN],
      ['https://evil.example/x', DEFAULT_AFTER_LOGIN],
      ['/\\evil.example', DEFAULT_AFTER_LOGIN],
      ['javascript:alert(1)', DEFAULT_AFTER_LOGIN],
    ]) {
      const r = await new Browser(t.baseUrl).signIn(w.owner.email, w.owner.password, next);
      expect(r.headers.get('location')).toBe(expected);
    }
    expect(safeNext('http://a.test', '/x\ty')).toBe(DEFAULT_AFTER_LOGIN);
    expect(safeNext('http://a.test', ['/x'])).toBe(DEFAULT_AFTER_LOGIN);
  });

  it('signs out with a CSRF-checked form', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    await b.signIn(w.owner.email, w.owner.password);
    const page = await (await b.get('/logout')).text();
    expect(page).toContain('Sign out</button>');
    expect((await b.post('/logout', { csrf: 'forged' })).status).toBe(403);
    const out = await b.post('/logout', { csrf: field(page, 'csrf') });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/login');
    expect(b.cookies.has('svc_session')).toBe(false);
    expect((await b.get('/settings/apps')).status).toBe(303);
  });

  it('/settings/apps lists the granted apps and agents and revokes a grant with every token', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const agent = await registerClient(t, { name: 'Planner <Agent>', kind: 'agent' });
    const app = await registerClient(t, { name: 'Calendar Sync' });
    const agentTokens = await obtainTokens(t, w, agent, { scope: 'me:read tasks:write', resource: `${t.baseUrl}/mcp` });
    const appTokens = await obtainTokens(t, w, app, { scope: 'me:read' });

    const b = new Browser(t.baseUrl);
    const anonymous = await b.get('/settings/apps');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/login?next=%2Fsettings%2Fapps');
    await b.signIn(w.owner.email, w.owner.password);
    const page = await (await b.get('/settings/apps')).text();
    expect(page).toContain('Planner &lt;Agent&gt;');
    expect(page).toContain('AI agent acting for you');
    expect(page).toContain('Calendar Sync');
    expect(page).toContain('tasks:write');
    expect(page).toContain('MCP tools (/mcp)');
    // the member sees none of the owner's grants
    const m = new Browser(t.baseUrl);
    await m.signIn(w.member.email, w.member.password);
    expect(await (await m.get('/settings/apps')).text()).toContain('You have not granted any app or agent access.');

    const grants = [...page.matchAll(/name="grant" value="([^"]+)"/g)].map((x) => x[1]);
    expect(grants.length).toBe(2);
    const csrf = field(page, 'csrf');
    // another user cannot revoke it
    const mPage = await (await m.get('/settings/apps')).text();
    expect((await m.post('/settings/apps/revoke', { csrf: field(mPage, 'csrf'), grant: grants[0] })).status).toBe(404);
    expect((await b.post('/settings/apps/revoke', { grant: grants[0] })).status).toBe(403);

    // newest first: the app's grant is listed first
    // Revoke asks first (a GET step; a POST without the confirmation answers with it) and changes nothing
    const ask = await (await b.get(`/settings/apps/revoke?grant=${grants[0]}`)).text();
    expect(ask).toContain('Revoke Calendar Sync?');
    expect((await b.post('/settings/apps/revoke', { csrf, grant: grants[0] })).status).toBe(200);
    expect((await call(t, 'GET', '/v1/me', { key: appTokens.access_token })).status).toBe(200);
    const revoked = await b.post('/settings/apps/revoke', { csrf, grant: grants[0], confirm: 'yes' });
    expect(revoked.status).toBe(303);
    expect((await call(t, 'GET', '/v1/me', { key: appTokens.access_token })).status).toBe(401);
    const after = await (await b.get('/settings/apps')).text();
    expect(after).not.toContain('Calendar Sync');
    expect(after).toContain('Planner &lt;Agent&gt;');
    expect(agentTokens.access_token).toMatch(/^svc_at_/);
  });
});

describe('html helper', () => {
  it('escapes interpolations, keeps nested html and raw, skips null/false', () => {
    const name = '<script>alert("x")</script>&\'';
    const out = html`<p title="${name}">${name}${[html`<b>${'a<b'}</b>`, raw('<i>ok</i>')]}${null}${false}${0}</p>`;
    expect(out.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;<b>a&lt;b</b><i>ok</i>0</p>',
    );
  });
});
