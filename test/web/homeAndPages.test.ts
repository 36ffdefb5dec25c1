import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector } from '../../src/agents/connectors.js';
import { createRoom } from '../../src/domain/rooms.js';
import { createWebhookWorker } from '../../src/webhooks/index.js';
import { errorSummary } from '../../src/web/developer/runsSection.js';
import { call, createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { Browser, obtainTokens, registerClient } from '../oauth/oauthHelpers.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';
import { invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { DevBrowser } from './developerHelpers.js';

// The home page, the 404 page, the developer settings' pages and navigation, names instead of ids, the charts,
// and the abuse cases of what the pages show from stored data (every name and error escaped).

const HOSTILE = '<img src=x onerror="alert(1)">';

let t: TestServer & AsyncDisposable;
let w: World;
beforeAll(async () => {
  t = await startTestServer();
  w = await createWorld(t.rt);
});
afterAll(async () => {
  await t?.close();
});

describe('the home page and the 404 page', () => {
  it('explains svc at / and links to sign-in, the API reference, the developer settings and the MCP endpoint', async () => {
    const anonymous = await t.fetch('/');
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('content-type')).toContain('text/html');
    expect(anonymous.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await anonymous.text();
    expect(html).toContain('href="/login?next=%2Fsettings%2Fdeveloper"');
    expect(html).toContain('href="/docs"');
    expect(html).toContain(`<code>${t.baseUrl}/mcp</code>`);
    const b = await DevBrowser.signedIn(t, w.owner);
    const signed = (await b.page('/')).html;
    expect(signed).toContain('href="/settings/developer"');
    expect(signed).toContain('href="/settings/apps"');
    expect(signed).toContain(`Signed in as ${w.owner.email}`);
  });

  it('answers unknown pages with a styled 404 that leads home, and never echoes the path', async () => {
    for (const path of ['/nope', '/settings/nope', `/x/${encodeURIComponent('<script>alert(1)</script>')}`]) {
      const r = await t.fetch(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type')).toContain('text/html');
      const html = await r.text();
      expect(html).toContain('Page not found');
      expect(html).toContain('href="/"');
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('Cannot GET');
    }
  });

  it('keeps JSON errors on the machine paths: /v1, /mcp, /oauth, /.well-known, /metrics', async () => {
    for (const path of ['/v1/nope', '/oauth/nope', '/.well-known/nope', '/metrics']) {
      const r = await t.fetch(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type'), path).toContain('application/json');
      expect(((await r.json()) as { error: { code: string } }).error.code, path).toBe('not_found');
    }
    // /mcp answers in JSON-RPC, as it always did
    const mcp = await t.fetch('/mcp/nope');
    expect(mcp.headers.get('content-type')).toContain('application/json');
    expect(((await mcp.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    const meta = await t.fetch('/.well-known/oauth-authorization-server');
    expect(meta.status).toBe(200);
    expect(((await meta.json()) as { issuer: string }).issuer).toBeTruthy();
    const token = await t.fetch('/oauth/token', { method: 'POST' });
    expect(token.status).toBe(400);
    expect(((await token.json()) as { error: string }).error).toBeTruthy();
  });

  it('signs in without `next` onto the developer settings', async () => {
    const b = new Browser(t.baseUrl);
    const r = await b.signIn(w.owner.email, w.owner.password);
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/settings/developer');
  });
});

describe('the developer settings pages', () => {
  it('has an overview that leads through a navigation to a page per area, the current one marked', async () => {
    const b = await DevBrowser.signedIn(t, w.owner);
    const overview = await b.page('/settings/developer');
    expect(overview.status).toBe(200);
    const pages = [
      ['/settings/developer/keys', 'API keys'],
      ['/settings/developer/webhooks', 'Webhooks'],
      ['/settings/developer/mcp', 'MCP clients and connectors'],
      ['/settings/developer/agent-runs', 'Agent runs'],
      ['/settings/developer/activity', 'API activity'],
    ];
    const nav = /<nav class="side" aria-label="Developer settings">[\s\S]*?<\/nav>/.exec(overview.html)![0];
    for (const [path, name] of pages) {
      expect(nav).toContain(`<a href="${path}">${name}</a>`);
      const p = await b.page(path);
      expect(p.status, path).toBe(200);
      expect(p.html).toContain(`<h1>${name}</h1>`);
      expect(p.html).toContain(`<a href="${path}" aria-current="page">${name}</a>`);
    }
    // the header leads to the apps, and signs out with a button, never a link to the sign-out page
    expect(overview.html).not.toContain('>Sessions</a>');
    expect(overview.html).toMatch(
      /<form method="post" action="\/logout">[^]*?<button type="submit">Sign out<\/button>/,
    );
    // old anchors of the single page lead to their page
    expect((await b.get('/settings/developer/mcp-clients')).headers.get('location')).toBe(
      '/settings/developer/mcp#mcp-clients',
    );
  });

  it("shows a webhook's last day per hour as an inline SVG, and the units of the month against the limit", async () => {
    await using rx = await startReceiver([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }]);
    const hook = await addWebhook(t.rt, w.roomId, rx.url);
    const worker = createWebhookWorker({ services: t.rt.services });
    for (const body of ['a', 'b'])
      await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body } });
    await worker.runOnce();
    await worker.stop();
    const b = await DevBrowser.signedIn(t, w.owner);
    const page = (await b.page(`/settings/developer/webhooks/${hook.id}`)).html;
    const chart = /<svg class="chart"[\s\S]*?<\/svg>/.exec(page)![0];
    expect(chart).toContain('role="img"');
    expect(chart).toMatch(/<title id="[^"]+">Deliveries per hour: \d+ succeeded, \d+ failed/);
    expect(chart).toContain('<rect');
    expect(page).not.toMatch(/<(img|link|script)[^>]+(src|href)="https?:/); // nothing from elsewhere
    expect(page).toMatch(/<th scope="row">\d{4}-\d{2}-\d{2} \d{2}:00 UTC<\/th>/);

    const activity = (await b.page('/settings/developer/activity')).html;
    const meter = /<figure aria-labelledby="usage-0-caption">[\s\S]*?<\/figure>/.exec(activity)![0];
    expect(meter).toMatch(/<svg class="chart"[^>]*role="img"/);
    expect(meter).toMatch(/Acme<\/strong>: [\d,]+ of 100,000 units used \([\d.]+%\)/);
  });

  it('names a connector, an app and a key in the activity, never an id or `unknown`', async () => {
    const env = await startReceiver(Array.from({ length: 4 }, () => ({ status: 202 })));
    await using _rx = env;
    const { connector } = await createConnector(t.rt.services, {
      organizationId: w.orgId,
      name: 'Planner bot',
      url: env.url,
      scopes: ['mcp:tools', 'rooms:read'],
    });
    const key = await invokerKey(t.rt, w);
    expect((await startRun(t, key, w.roomId, connector.id)).status).toBe(202);
    await invokeDue(t.rt);
    const token = JSON.parse(env.requests[0].body.toString('utf8')).delegation.accessToken as string;
    expect((await postMcp(t, toolCall('list_rooms', {}), { token })).status).toBe(200);
    const app = await registerClient(t, { name: 'Calendar Sync' });
    const tokens = await obtainTokens(t, w, app, { scope: 'me:read' });
    expect((await call(t, 'GET', '/v1/me', { key: tokens.access_token })).status).toBe(200);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    const b = await DevBrowser.signedIn(t, w.owner);
    const activity = /<section id="activity"[\s\S]*?<\/section>/.exec(
      (await b.page('/settings/developer/activity')).html,
    )![0];
    expect(activity).toContain('Agent connector “Planner bot”');
    expect(activity).toContain('App “Calendar Sync” (OAuth)');
    expect(activity).toContain('API key “test” (svc_test_…');
    expect(activity).not.toContain('“unknown”');
    expect(activity).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/);
    const runs = (await b.page('/settings/developer/agent-runs')).html;
    expect(runs).toContain('Planner bot');
  });
});

describe('abuse cases of the pages', () => {
  it('escapes room, connector and webhook-related names and stored run errors wherever the pages show them', async () => {
    const room = await t.rt.services.ds.transaction((m) =>
      createRoom(m, new Date(), { name: HOSTILE, createdById: w.owner.id, organizationId: w.orgId }),
    );
    const hook = await addWebhook(t.rt, room.id, 'http://127.0.0.1:9/x');
    await using rx = await startReceiver([
      { status: 200, body: JSON.stringify({ status: 'failed', error: `${HOSTILE} {"nested":{"message":"boom"}}` }) },
    ]);
    const { connector } = await createConnector(t.rt.services, {
      organizationId: w.orgId,
      name: `${HOSTILE} bot`,
      url: rx.url,
      scopes: ['mcp:tools'],
    });
    const key = await invokerKey(t.rt, w);
    expect((await startRun(t, key, w.roomId, connector.id)).status).toBe(202);
    await invokeDue(t.rt);
    const b = await DevBrowser.signedIn(t, w.owner);
    for (const path of [
      '/settings/developer',
      '/settings/developer/webhooks',
      `/settings/developer/webhooks/${hook.id}`,
      `/settings/developer/webhooks/delete?webhook=${hook.id}`,
      `/settings/developer/webhooks/rotate?webhook=${hook.id}&periodDays=${encodeURIComponent(HOSTILE)}`,
      '/settings/developer/mcp',
      '/settings/developer/agent-runs',
      '/settings/developer/activity',
    ]) {
      const p = await b.page(path);
      expect(p.status, path).toBe(200);
      expect(p.html, path).not.toContain(HOSTILE);
      expect(p.html, path).not.toContain('onerror="');
    }
    const runs = (await b.page('/settings/developer/agent-runs')).html;
    expect(runs).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; bot');
    // the error: one line, the whole text behind a disclosure
    expect(runs).toMatch(
      /<details><summary><span class="summary-line">connector_failed: &lt;img[^<]*<\/span><\/summary><pre>/,
    );
  });

  it('summarises long and nested errors in one line', () => {
    expect(errorSummary('{"error":{"code":"x","message":"the receiver exploded"}}')).toBe('the receiver exploded');
    expect(errorSummary('{"error":"bad_gateway","message":"upstream down"}')).toBe('bad_gateway: upstream down');
    expect(errorSummary(`first line\n${'x'.repeat(500)}`)).toBe('first line');
    expect(errorSummary('y'.repeat(500))).toHaveLength(80);
    expect(errorSummary('connector_failed: {"error":{"code":"x","message":"model refused"}}')).toBe(
      'connector_failed: model refused',
    );
  });

  it('confirmation steps change nothing, refuse other users, and need the CSRF token to act', async () => {
    const other = await createWorld(t.rt, 'Globex');
    const app = await registerClient(t, { name: 'Notes app' });
    await obtainTokens(t, w, app, { scope: 'me:read' });
    const owner = await DevBrowser.signedIn(t, w.owner);
    const apps = (await owner.page('/settings/apps')).html;
    const grant = /name="grant" value="([^"]+)"/.exec(apps)![1];
    // the list's Revoke is a GET to the confirmation page: it revokes nothing
    expect(apps).toContain('<form method="get" action="/settings/apps/revoke">');
    const ask = await owner.page(`/settings/apps/revoke?grant=${grant}`);
    expect(ask.status).toBe(200);
    expect(ask.html).toContain('Revoke Notes app?');
    expect((await owner.page('/settings/apps')).html).toContain('Notes app');
    // someone else's grant: 404 on the step and on the action, nothing said about it
    const stranger = await DevBrowser.signedIn(t, other.owner);
    const theirs = await stranger.page(`/settings/apps/revoke?grant=${grant}`);
    expect(theirs.status).toBe(404);
    expect(theirs.html).not.toContain('Notes app');
    await stranger.page('/settings/apps');
    expect((await stranger.submit('/settings/apps/revoke', { grant, confirm: 'yes' })).status).toBe(404);
    // the action without the session's token is refused
    expect((await owner.submit('/settings/apps/revoke', { grant, confirm: 'yes' }, { csrf: 'forged' })).status).toBe(
      403,
    );
    expect((await owner.page('/settings/apps')).html).toContain('Notes app');
    await owner.page(`/settings/apps/revoke?grant=${grant}`);
    const done = await owner.submit('/settings/apps/revoke', { grant, confirm: 'yes' });
    expect(done.status).toBe(303);
    expect((await owner.page('/settings/apps')).html).not.toContain('Notes app');
  });
});
