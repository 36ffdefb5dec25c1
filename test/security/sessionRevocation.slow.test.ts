import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { WebSession } from '../../db/entities/index.js';
import { sha256Hex } from '../../src/domain/hashing.js';
import { purgeExpiredWebSessions, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../src/domain/webSessions.js';
import type { TestServer } from '../helpers/harness.js';
import { Browser, field, startOAuthServer } from '../oauth/oauthHelpers.js';

// Session replay: sessions are stored server-side (only the SHA-256 of the cookie's
// token), so signing out, "sign out everywhere" and a password change end them on the server, and a copy
// of the cookie stops working at once; idle and absolute expiry hold on the service clock.

const run = promisify(execFile);
const HOUR = 60 * 60 * 1000;

/** A second browser holding a copy of `b`'s session cookie (what a thief would replay). */
function copyOf(b: Browser): Browser {
  const thief = new Browser(b.baseUrl);
  thief.cookies.set('svc_session', b.cookies.get('svc_session')!);
  return thief;
}

/** 200 when the browser is signed in, else where it was sent. */
async function whereIs(b: Browser): Promise<string | number> {
  const res = await b.get('/settings/apps');
  return res.status === 200 ? 200 : (res.headers.get('location') ?? res.status);
}

const SIGNED_OUT = '/login?next=%2Fsettings%2Fapps';

describe('security: server-side sessions', () => {
  it('session replay after sign-out: a copied cookie stops working the moment its owner signs out', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    expect((await b.signIn(w.owner.email, w.owner.password)).status).toBe(303);
    const thief = copyOf(b);
    expect(await whereIs(thief)).toBe(200);
    const page = await (await b.get('/logout')).text();
    const out = await b.post('/logout', { csrf: field(page, 'csrf') });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/login');
    expect(await whereIs(thief)).toBe(SIGNED_OUT);
    expect(await whereIs(b)).toBe(SIGNED_OUT);
    expect(await t.rt.ds.manager.countBy(WebSession, { userId: w.owner.id })).toBe(0);
  });

  it('session replay after "sign out everywhere": every session of the user ends (CSRF-checked), other users\' stay', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const laptop = new Browser(t.baseUrl);
    const phone = new Browser(t.baseUrl);
    const colleague = new Browser(t.baseUrl);
    await laptop.signIn(w.owner.email, w.owner.password);
    await phone.signIn(w.owner.email, w.owner.password);
    await colleague.signIn(w.member.email, w.member.password);
    const thief = copyOf(phone);
    expect(await (await laptop.get('/settings/apps')).text()).toContain(
      '<a href="/logout">Sign out on every device</a>',
    );
    const page = await (await laptop.get('/logout')).text();
    expect(page).toContain('<button type="submit">Sign out everywhere</button>');
    // a forged or missing token changes nothing
    expect((await laptop.post('/logout/everywhere', { csrf: 'forged' })).status).toBe(403);
    expect((await laptop.post('/logout/everywhere', {})).status).toBe(403);
    const crossOrigin = await laptop.request('/logout/everywhere', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ csrf: field(page, 'csrf') }).toString(),
    });
    expect(crossOrigin.status).toBe(403);
    expect(await whereIs(phone)).toBe(200);

    const all = await laptop.post('/logout/everywhere', { csrf: field(page, 'csrf') });
    expect(all.status).toBe(303);
    expect(all.headers.get('location')).toBe('/login');
    for (const b of [laptop, phone, thief]) expect(await whereIs(b)).toBe(SIGNED_OUT);
    expect(await whereIs(colleague)).toBe(200);
    // signed out already: the form sends back to /login
    expect((await thief.post('/logout/everywhere', { csrf: field(page, 'csrf') })).headers.get('location')).toBe(
      '/login',
    );
  });

  it('session replay after a password change (svc user set-password): every session of the user ends', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    await b.signIn(w.owner.email, w.owner.password);
    const thief = copyOf(b);
    const other = new Browser(t.baseUrl);
    await other.signIn(w.member.email, w.member.password);
    const out = await svc(t, 'user', 'set-password', '--user', w.owner.id, '--password', 'a brand new password');
    expect(out).toEqual({ sessionsEnded: 1 });
    expect(await whereIs(thief)).toBe(SIGNED_OUT);
    expect(await whereIs(b)).toBe(SIGNED_OUT);
    expect(await whereIs(other)).toBe(200);
    expect((await new Browser(t.baseUrl).signIn(w.owner.email, w.owner.password)).status).toBe(401);
    expect((await new Browser(t.baseUrl).signIn(w.owner.email, 'a brand new password')).status).toBe(303);
  }, 120_000);

  it('stale session replay: a session idle for 12 hours ends, and none outlives 7 days however active', async () => {
    await using env = await startOAuthServer();
    const { t, w, clock } = env;
    const idle = new Browser(t.baseUrl);
    await idle.signIn(w.owner.email, w.owner.password);
    const forgotten = new Browser(t.baseUrl);
    await forgotten.signIn(w.owner.email, w.owner.password);
    clock.advance(SESSION_IDLE_MS - HOUR);
    expect(await whereIs(idle)).toBe(200);
    // idle time counts from the last request, not from sign-in
    clock.advance(SESSION_IDLE_MS - HOUR);
    expect(await whereIs(idle)).toBe(200);
    expect(await whereIs(forgotten)).toBe(SIGNED_OUT);
    clock.advance(SESSION_IDLE_MS + 1000);
    expect(await whereIs(idle)).toBe(SIGNED_OUT);
    // a session used every 11 hours lives until 7 days after sign-in, and no longer
    const active = new Browser(t.baseUrl);
    await active.signIn(w.owner.email, w.owner.password);
    const step = SESSION_IDLE_MS - HOUR;
    let elapsed = 0;
    while (elapsed + step < SESSION_ABSOLUTE_MS) {
      clock.advance(step);
      elapsed += step;
      expect(await whereIs(active), `after ${elapsed / HOUR} h`).toBe(200);
    }
    clock.advance(SESSION_ABSOLUTE_MS - elapsed + 1000);
    expect(await whereIs(active)).toBe(SIGNED_OUT);
    // the daily housekeeping removes what has ended
    expect(await purgeExpiredWebSessions(t.rt.services)).toBeGreaterThanOrEqual(2);
    expect(await t.rt.ds.manager.countBy(WebSession, { userId: w.owner.id })).toBe(0);
  });

  it("session theft from the database: only the SHA-256 of the cookie's token is stored; signing in again ends the old session", async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const b = new Browser(t.baseUrl);
    const signed = await b.signIn(w.owner.email, w.owner.password);
    const cookie = signed.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    const token = b.cookies.get('svc_session')!;
    const rows = await t.rt.ds.manager.findBy(WebSession, { userId: w.owner.id });
    expect(rows).toHaveLength(1);
    expect(rows[0].tokenHash).toBe(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    // a stored hash is not a cookie
    expect(
      await whereIs(Object.assign(new Browser(t.baseUrl), { cookies: new Map([['svc_session', rows[0].tokenHash]]) })),
    ).toBe(SIGNED_OUT);
    const thief = copyOf(b);
    // the signed-in browser posts the sign-in form again (a form it rendered before signing in)
    const fresh = new Browser(t.baseUrl);
    const form = await (await fresh.get('/login')).text();
    b.cookies.set('svc_csrf', fresh.cookies.get('svc_csrf')!);
    expect(
      (await b.post('/login', { csrf: field(form, 'csrf'), email: w.owner.email, password: w.owner.password })).status,
    ).toBe(303);
    expect(b.cookies.get('svc_session')).not.toBe(token);
    expect(await whereIs(thief)).toBe(SIGNED_OUT);
    expect(await whereIs(b)).toBe(200);
    expect(await t.rt.ds.manager.countBy(WebSession, { userId: w.owner.id })).toBe(1);
  });
});

/** Runs the operator CLI against the test server's database; returns its JSON. */
async function svc(t: TestServer, ...args: string[]): Promise<unknown> {
  // vitest (vite) sets BASE_URL=/ in process.env; the CLI must not inherit it
  const { BASE_URL: _ignored, ...parentEnv } = process.env;
  const env = {
    ...parentEnv,
    DATABASE_URL: t.env.DATABASE_URL,
    DATA_DIR: t.dataDir,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
  };
  const { stdout } = await run(process.execPath, ['bin/svc.mjs', ...args, '--json'], { env, cwd: process.cwd() });
  return JSON.parse(stdout.trim());
}
