import { describe, expect, it } from 'vitest';
import { ApiKey, Webhook } from '../../db/entities/index.js';
import { createApiKey } from '../../src/domain/apiKeys.js';
import { createWebhookWorker } from '../../src/webhooks/index.js';
import { call, createWorld } from '../helpers/harness.js';
import { Browser } from '../oauth/oauthHelpers.js';
import { startReceiver } from '../webhooks/helpers.js';
import { DevBrowser, secretShown, startDeveloperEnv } from './developerHelpers.js';

const POSTS = [
  '/settings/developer/keys',
  '/settings/developer/keys/revoke',
  '/settings/developer/webhooks',
  '/settings/developer/webhooks/activate',
  '/settings/developer/webhooks/deactivate',
  '/settings/developer/webhooks/rotate',
  '/settings/developer/webhooks/complete-rotation',
  '/settings/developer/webhooks/delete',
  '/settings/developer/webhooks/redeliver',
  '/settings/developer/webhooks/update',
  '/settings/developer/webhooks/recover',
  '/settings/developer/mcp-clients',
  '/settings/developer/mcp-clients/remove',
  '/settings/developer/connectors',
  '/settings/developer/connectors/deactivate',
];
const LOGIN = '/login?next=%2Fsettings%2Fdeveloper';

describe('/settings/developer refusals', () => {
  it('sends visitors without a session to /login and back', async () => {
    await using env = await startDeveloperEnv();
    const b = new Browser(env.t.baseUrl);
    for (const path of [
      '/settings/developer',
      '/settings/developer/keys/revoke?key=x',
      '/settings/developer/webhooks/delete?webhook=x',
      '/settings/developer/keys',
      '/settings/developer/activity',
    ]) {
      const r = await b.get(path);
      expect(r.status, path).toBe(303);
      expect(r.headers.get('location')).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
    for (const path of POSTS) {
      const r = await b.post(path, { name: 'x' });
      expect(r.status, path).toBe(303);
      expect(r.headers.get('location')).toBe(LOGIN);
    }
    const signed = await b.signIn(env.w.owner.email, env.w.owner.password, '/settings/developer');
    expect(signed.headers.get('location')).toBe('/settings/developer');
    // the session cookie of the pages is no /v1 credential
    const cookie = b.cookies.get('svc_session')!;
    expect((await call(env.t, 'GET', '/v1/me', { headers: { cookie: `svc_session=${cookie}` } })).status).toBe(401);
    expect((await call(env.t, 'GET', '/v1/me', { key: cookie })).status).toBe(401);
  });

  it("refuses every form without the session's CSRF token (403) and changes nothing", async () => {
    await using env = await startDeveloperEnv();
    const b = await DevBrowser.signedIn(env.t, env.w.owner);
    await b.page();
    const other = await DevBrowser.signedIn(env.t, env.w.owner);
    await other.page();
    const good = b.csrf();
    const fields = {
      name: 'sneaky',
      scopes: 'me:read',
      mode: 'live',
      context: 'personal',
      room: env.w.roomId,
      url: 'http://127.0.0.1:9/x',
      key: env.w.keyId,
      confirm: 'yes',
    };
    for (const path of POSTS) {
      for (const o of [
        { csrf: null },
        { csrf: 'forged' },
        { csrf: other.csrf() },
        { csrf: good, origin: 'https://evil.example' },
      ]) {
        const r = await b.submit(path, fields, o);
        expect(r.status, `${path} ${JSON.stringify(o)}`).toBe(403);
        expect(r.html).toContain('This form expired or did not come from this site.');
      }
    }
    const repo = env.t.rt.ds.getRepository(ApiKey);
    expect(await repo.countBy({ name: 'sneaky' })).toBe(0);
    expect((await repo.findOneByOrFail({ id: env.w.keyId })).revokedAt).toBeNull();
    expect(await env.t.rt.ds.getRepository(Webhook).count()).toBe(0);
    // the same form with the right token goes through
    expect((await b.submit('/settings/developer/keys', fields, { csrf: good })).status).toBe(200);
  });

  it("never lets a user revoke someone else's key", async () => {
    await using env = await startDeveloperEnv();
    const member = await DevBrowser.signedIn(env.t, env.w.member);
    const page = await member.page('/settings/developer/keys');
    expect(page.html).not.toContain(env.w.keyId);
    const confirm = await member.page(`/settings/developer/keys/revoke?key=${env.w.keyId}`);
    expect(confirm.status).toBe(404);
    expect(confirm.html).toContain('No such API key.');
    const r = await member.submit('/settings/developer/keys/revoke', { key: env.w.keyId, confirm: 'yes' });
    expect(r.status).toBe(404);
    expect((await call(env.t, 'GET', '/v1/me', { key: env.w.key })).status).toBe(200);
  });

  it('never lets a user manage a webhook of a room they do not administer', async () => {
    await using env = await startDeveloperEnv();
    await using rx = await startReceiver();
    const owner = await DevBrowser.signedIn(env.t, env.w.owner);
    await owner.page();
    const secret = secretShown(
      (await owner.submit('/settings/developer/webhooks', { room: env.w.roomId, url: rx.url })).html,
    )!;
    const hook = await env.t.rt.ds.getRepository(Webhook).findOneByOrFail({ roomId: env.w.roomId });
    await call(env.t, 'POST', `/v1/rooms/${env.w.roomId}/messages`, { key: env.w.key, body: { body: 'hi' } });
    await createWebhookWorker({ services: env.t.rt.services }).runOnce();
    const delivery = (await owner.page(`/settings/developer/webhooks/${hook.id}`)).html.match(
      /name="delivery" value="(whd_[^"]+)"/,
    )![1];

    // a plain member of the room (403), and the owner of another organization (404: the room is not theirs to see)
    const other = await createWorld(env.t.rt, 'Globex');
    for (const [user, status] of [
      [env.w.member, 403],
      [other.owner, 404],
    ] as const) {
      const b = await DevBrowser.signedIn(env.t, user);
      const page = await b.page('/settings/developer/webhooks');
      expect(page.html).not.toContain(hook.id);
      const own = await b.page(`/settings/developer/webhooks/${hook.id}`);
      expect(own.status).toBe(404);
      expect(own.html).not.toContain(rx.url);
      await b.page('/settings/developer/webhooks');
      expect(page.html).not.toContain(rx.url);
      const at = { room: env.w.roomId, webhook: hook.id };
      const attempts: [string, Record<string, string>][] = [
        ['/settings/developer/webhooks', { room: env.w.roomId, url: rx.url }],
        ['/settings/developer/webhooks/deactivate', at],
        ['/settings/developer/webhooks/activate', at],
        ['/settings/developer/webhooks/rotate', { ...at, periodDays: '7', confirm: 'yes' }],
        ['/settings/developer/webhooks/rotate', { ...at, periodDays: '7' }],
        ['/settings/developer/webhooks/complete-rotation', { ...at, confirm: 'yes' }],
        ['/settings/developer/webhooks/complete-rotation', at],
        ['/settings/developer/webhooks/delete', { ...at, confirm: 'yes' }],
        ['/settings/developer/webhooks/redeliver', { ...at, delivery }],
        ['/settings/developer/webhooks/update', { ...at, eventTypes: 'task.created', maxPerSecond: '1' }],
        ['/settings/developer/webhooks/recover', { ...at, since: '2026-06-10T11:00' }],
      ];
      for (const [path, fields] of attempts) {
        const r = await b.submit(path, fields);
        expect(r.status, `${path} as ${user.email}`).toBe(status);
        expect(r.html).toContain('<p class="error" role="alert">');
        expect(secretShown(r.html)).toBeNull();
        expect(r.html).not.toContain(secret);
      }
      for (const step of ['delete', 'rotate', 'complete-rotation']) {
        const confirm = await b.page(`/settings/developer/webhooks/${step}?webhook=${hook.id}`);
        expect(confirm.status, step).toBe(status);
        expect(confirm.html).not.toContain(rx.url);
      }
    }
    const after = await env.t.rt.ds.getRepository(Webhook).findOneByOrFail({ id: hook.id });
    expect(after).toMatchObject({
      active: true,
      nextSecretEnc: null,
      secretEnc: hook.secretEnc,
      eventTypes: null,
      maxDeliveriesPerSecond: null,
    });
    expect(await env.t.rt.ds.getRepository(Webhook).count()).toBe(1);
    expect(rx.requests).toHaveLength(1);
  });

  it("shows only the user's own API activity, newest first, without secrets", async () => {
    await using env = await startDeveloperEnv();
    const s = env.t.rt.services;
    const { token: memberKey } = await s.ds.transaction(async (m) => {
      const r = await createApiKey(m, s.now(), {
        userId: env.w.member.id,
        organizationId: env.w.orgId,
        name: 'member key',
        scopes: ['me:read'],
        mode: 'test',
      });
      return { token: r.token };
    });
    await call(env.t, 'GET', '/v1/me', { key: env.w.key });
    env.clock.advance(1000);
    await call(env.t, 'GET', `/v1/rooms/${env.w.dmRoomId}`, { key: env.w.key });
    await call(env.t, 'GET', '/v1/organizations', { key: memberKey });
    const owner = await DevBrowser.signedIn(env.t, env.w.owner);
    const html = (await owner.page('/settings/developer/activity')).html;
    const activity = /<section id="activity"[\s\S]*?<\/section>/.exec(html)![0];
    const requests = [...activity.matchAll(/<td><code>([A-Z]+ [^<]+)<\/code>/g)].map((m) => m[1]);
    expect(requests).toEqual(['GET /v1/rooms/{roomId}', 'GET /v1/me']);
    expect(activity).toContain('404 <span class="muted">room_not_found</span>');
    expect(activity).toContain('API key “test” (svc_test_…');
    expect(activity).not.toContain(env.w.key);
    expect(activity).not.toContain('/v1/organizations');
    const member = await DevBrowser.signedIn(env.t, env.w.member);
    const theirs = /<section id="activity"[\s\S]*?<\/section>/.exec(
      (await member.page('/settings/developer/activity')).html,
    )![0];
    expect(theirs).toContain('GET /v1/organizations');
    expect(theirs).not.toContain('/v1/me');
    expect(theirs).not.toContain(memberKey);
  });
});
