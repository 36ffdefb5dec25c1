import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector } from '../../src/agents/connectors.js';
import { createWebhookWorker } from '../../src/webhooks/index.js';
import { approveClient } from '../../src/oauth/clientApprovals.js';
import { invokeDue, invokerKey, startRun } from '../agents/helpers.js';
import { call, createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { authorizeUrl, CALLBACK, obtainTokens, pkcePair, registerClient } from '../oauth/oauthHelpers.js';
import { addWebhook, startReceiver } from '../webhooks/helpers.js';
import { ensureChromium, INSTALL_TIMEOUT_MS, openBrowser, type TestBrowser } from './chromium.js';

// Every page a person meets, in Chromium at a laptop's width (1280 px) and a phone's (390 px): axe-core (WCAG 2 A and
// AA rules) finds no serious or critical violation, nothing runs off the side (only containers made to scroll may
// overflow), every input has a label, every table headers, focus is visible and each checkbox sits beside its label.
// A screenshot of each page at each width goes to test-output/screenshots/ (pages-<name>-<width>.png) for review.
// One browser and one tab for the whole file.

beforeAll(ensureChromium, INSTALL_TIMEOUT_MS);

const WIDTHS = [1280, 390] as const;
const LONG_ERROR = JSON.stringify({
  error: {
    code: 'upstream_failed',
    message: 'The model provider refused the request',
    details: { trace: 'x'.repeat(400) },
  },
});

interface Layout {
  scrollWidth: number;
  viewport: number;
  offenders: string[];
  unlabelled: string[];
  tablesWithoutHeaders: number;
  checkboxesApart: string[];
}

/**
 * What the page's layout and form markup get wrong, read in the page (serialized by `page.evaluate`; the DOM's
 * types are not in this project's `lib`, hence `any`).
 */
function readLayout(): Layout {
  const { document, getComputedStyle, NodeFilter } = globalThis as any;
  const vw = document.documentElement.clientWidth;
  const scrolls = (el: any) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
  const offenders: string[] = [];
  const inScroller = (el: any) => {
    for (let p = el; p && p !== document.body; p = p.parentElement) if (scrolls(p)) return true;
    return false;
  };
  const describe = (el: any) =>
    `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${el.className}` : ''}`;
  for (const el of Array.from<any>(document.body.querySelectorAll('*'))) {
    const r = el.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || r.right <= vw + 1) continue;
    if (!inScroller(el.parentElement)) offenders.push(`${describe(el)} ends at ${Math.round(r.right)}`);
  }
  // text that runs out of its box (a long word) counts too
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !inScroller(n.parentElement))
      offenders.push(
        `text "${(n.textContent ?? '').trim().slice(0, 40)}" in ${describe(n.parentElement!)} ends at ${Math.round(r.right)}`,
      );
  }
  const unlabelled = Array.from<any>(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
    .filter((el) => !el.labels?.length && !el.getAttribute('aria-label'))
    .map((el) => String(el.name || el.id));
  const checkboxesApart: string[] = [];
  for (const box of Array.from<any>(document.querySelectorAll('input[type=checkbox]'))) {
    const b = box.getBoundingClientRect();
    if (!b.width) continue;
    const label = box.labels?.[0];
    if (!label) continue;
    // the label's text starts right of the box, on the same line
    const range = document.createRange();
    range.selectNodeContents(label);
    const text = Array.from<any>(range.getClientRects()).find((x) => x.width > 0 && x.left >= b.right - 1);
    if (!text || Math.abs(text.top + text.height / 2 - (b.top + b.height / 2)) > b.height || text.left - b.right > 24)
      checkboxesApart.push(box.value);
  }
  return {
    scrollWidth: document.documentElement.scrollWidth,
    viewport: vw,
    offenders: offenders.slice(0, 8),
    unlabelled,
    tablesWithoutHeaders: Array.from<any>(document.querySelectorAll('table')).filter((t) => !t.querySelector('th'))
      .length,
    checkboxesApart,
  };
}

let t: TestServer & AsyncDisposable;
let w: World;
let browser: TestBrowser;
let page: Page;
const receivers: AsyncDisposable[] = [];
let hookId = '';
const checked: string[] = [];

/** Runs every check on the page as it is, at both widths, and saves a screenshot of each. */
async function check(name: string) {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
    // legacy mode: axe runs in the page itself, without a blank tab per analysis (the pages have no frames)
    const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).setLegacyMode(true).analyze();
    const bad = axe.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect(bad, `${name} at ${width} px`).toEqual([]);
    const layout = await page.evaluate(readLayout);
    expect(layout.offenders, `${name} at ${width} px`).toEqual([]);
    expect(layout.scrollWidth, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(layout.viewport);
    expect(layout.unlabelled, `${name}: inputs without a label`).toEqual([]);
    expect(layout.tablesWithoutHeaders, `${name}: tables without headers`).toBe(0);
    expect(layout.checkboxesApart, `${name} at ${width} px: checkboxes apart from their label`).toEqual([]);
    await browser.screenshot(`pages-${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  checked.push(name);
}

/** Signs the tab in as the owner, unless it already is. */
async function signIn() {
  await page.goto(`${t.baseUrl}/login?next=%2Fsettings%2Fdeveloper`);
  if (!page.url().includes('/login')) return;
  await page.getByLabel('Email').fill(w.owner.email);
  await page.getByLabel('Password').fill(w.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/settings\/developer$/);
}

async function open(path: string, name: string) {
  await page.goto(t.baseUrl + path);
  await check(name);
}

beforeAll(async () => {
  t = await startTestServer();
  w = await createWorld(t.rt);
  // a webhook with a day of deliveries, some failing
  const healthy = await startReceiver();
  const failing = await startReceiver(Array.from({ length: 8 }, () => ({ status: 500, body: 'receiver exploded' })));
  receivers.push(healthy, failing);
  hookId = (await addWebhook(t.rt, w.roomId, healthy.url)).id;
  await addWebhook(t.rt, w.roomId, `${failing.url}/with/a/rather/long/path/that/must/wrap/somewhere/on/a/phone`);
  const worker = createWebhookWorker({ services: t.rt.services });
  for (const body of ['a', 'b', 'c'])
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body } });
  await worker.runOnce();
  await worker.stop();
  // a connector whose run failed with a long nested error
  const agent = await startReceiver([{ status: 200, body: JSON.stringify({ status: 'failed', error: LONG_ERROR }) }]);
  receivers.push(agent);
  const { connector } = await createConnector(t.rt.services, {
    organizationId: w.orgId,
    name: 'Planner bot',
    url: agent.url,
    scopes: ['mcp:tools', 'rooms:read'],
  });
  await startRun(t, await invokerKey(t.rt, w), w.roomId, connector.id, { text: 'Plan the offsite' });
  await invokeDue(t.rt);
  // an app with a grant, an approved MCP client
  const app = await registerClient(t, { name: 'Calendar Sync' });
  await call(t, 'GET', '/v1/me', { key: (await obtainTokens(t, w, app, { scope: 'me:read' })).access_token });
  await t.rt.services.ds.transaction((m) =>
    approveClient(m, new Date(), { pattern: 'https://claude.ai', organizationId: w.orgId, createdById: w.owner.id }),
  );
  browser = await openBrowser();
  page = browser.page;
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.[Symbol.asyncDispose]();
  for (const r of receivers) await r[Symbol.asyncDispose]();
  await t?.close();
});

describe('the pages at 1280 and 390 px', { timeout: 600_000 }, () => {
  it('before sign-in: home, sign-in (and its error), 404, an OAuth error page', async () => {
    await open('/', 'home');
    await open('/nope', 'not-found');
    await open('/oauth/authorize?client_id=nope', 'authorize-error');
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('Email').fill(w.owner.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await check('sign-in-error');
    // focus is visible: the first Tab lands on the skip link, drawn with an outline
    await page.keyboard.press('Tab');
    const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).not.toBe('none');
    await page.getByLabel('Password').fill(w.owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // without `next`, sign-in lands on the developer settings
    await page.waitForURL(/\/settings\/developer$/);
  });

  it('consent: Allow is the primary action, Deny a secondary one, and the sentence reads right', async () => {
    await signIn();
    const client = await registerClient(t, { name: 'Notes app', redirectUris: [CALLBACK] });
    const { challenge } = pkcePair();
    await page.goto(
      t.baseUrl +
        authorizeUrl({
          response_type: 'code',
          client_id: client.clientId,
          redirect_uri: CALLBACK,
          scope: 'me:read rooms:read',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          resource: `${t.baseUrl}/v1`,
          state: 's',
        }),
    );
    await page.waitForURL(/\/oauth\/consent/);
    expect(await page.locator('main p').first().textContent()).toMatch(/^Notes app\s+asks to use the REST API/);
    const allow = page.getByRole('button', { name: 'Allow' });
    const deny = page.getByRole('button', { name: 'Deny' });
    const look = (b: typeof allow) => b.evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor);
    expect(await look(allow)).not.toBe(await look(deny));
    await check('consent');
  });

  it('the developer settings: every page of the navigation and each step', async () => {
    await signIn();
    await open('/settings/developer', 'developer-overview');
    const nav = page.getByRole('navigation', { name: 'Developer settings' });
    for (const name of ['API keys', 'Webhooks', 'MCP clients and connectors', 'Agent runs', 'API activity'])
      expect(await nav.getByRole('link', { name }).count(), name).toBe(1);

    await nav.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(/\/keys$/);
    await check('developer-keys');
    await page.getByLabel('Name', { exact: true }).fill('Phone key');
    await page.getByLabel('me:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Copy it now').waitFor();
    await check('developer-key-created');
    await page.goto(`${t.baseUrl}/settings/developer/keys`);
    await page
      .locator('#active-keys')
      .getByRole('row', { name: /Phone key/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await page.getByRole('heading', { name: 'Revoke API key?' }).waitFor();
    await check('developer-key-revoke-confirm');

    await open('/settings/developer/webhooks', 'developer-webhooks');
    await open(`/settings/developer/webhooks/${hookId}`, 'developer-webhook');
    expect(await page.locator('svg.chart').count()).toBe(1);
    await page.getByRole('link', { name: 'Details' }).first().click();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    await check('developer-webhook-delivery');
    await page.goBack();
    await page.getByRole('button', { name: 'Start rotation' }).click();
    await page.getByRole('heading', { name: 'Start rotation?' }).waitFor();
    await check('developer-webhook-rotate-confirm');
    await open(`/settings/developer/webhooks/delete?webhook=${hookId}`, 'developer-webhook-delete-confirm');
    // the webhook that keeps failing, with its long URL
    await page.goto(`${t.baseUrl}/settings/developer/webhooks`);
    await page.getByRole('link', { name: /with\/a\/rather\/long/ }).click();
    await page.getByRole('heading', { name: /with\/a\/rather\/long/ }).waitFor();
    await check('developer-webhook-failing');

    await open('/settings/developer/mcp', 'developer-mcp');
    await open('/settings/developer/agent-runs', 'developer-agent-runs');
    // a long error is one line; its details open on demand
    const error = page.locator('#agent-runs details').first();
    expect(await error.locator('summary').textContent()).toContain('connector_failed');
    const summary = await error.locator('summary').boundingBox();
    expect(summary!.height).toBeLessThan(40);
    await open('/settings/developer/activity', 'developer-activity');
    expect(await page.locator('#usage svg.chart').count()).toBeGreaterThan(0);
  });

  it('the apps page, its confirmation, sign-out, a 404 and a refused form while signed in', async () => {
    await signIn();
    await open('/settings/apps', 'apps');
    await page.getByRole('button', { name: 'Revoke Calendar Sync' }).click();
    await page.getByRole('heading', { name: 'Revoke Calendar Sync?' }).waitFor();
    await check('apps-revoke-confirm');
    await open('/', 'home-signed-in');
    // "Sessions" is no header link to the sign-out page; the header signs out with a button
    expect(await page.getByRole('banner').getByRole('link', { name: 'Sessions' }).count()).toBe(0);
    await open('/logout', 'sign-out');
    await open('/settings/developer/nope/deeper', 'not-found-signed-in');
    await page.goto(`${t.baseUrl}/settings/developer/webhooks/whk_nope`);
    await check('developer-webhook-unknown');
    if (checked.length > 10) expect(checked.length).toBeGreaterThanOrEqual(24); // the whole file ran
  });
});
