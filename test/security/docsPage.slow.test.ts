import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTALL_TIMEOUT_MS, ensureChromium, openBrowser } from '../browser/chromium.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';

// The API reference at /docs leaks nothing to other hosts (no web fonts, no registry or request
// proxy, no telemetry: every request the page makes goes to this server), renders under a
// Content-Security-Policy that allows only what it uses (no violation reported), and /favicon.ico answers.

describe('the /docs reference page', () => {
  let t: TestServer;
  beforeAll(async () => {
    ensureChromium();
    t = await startTestServer();
  }, INSTALL_TIMEOUT_MS);
  afterAll(() => t?.close());

  it('answers /docs with a Content-Security-Policy that allows only this origin and a per-request nonce, and /favicon.ico with 204', async () => {
    const res = await t.fetch('/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    const html = await res.text();
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    // no other host anywhere in the policy, and no script without the nonce
    expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'|script-src[^;]*'unsafe-inline'/);
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
    expect(html).toContain('/v1/openapi.json');
    expect(html).toContain('src="/docs/standalone.js"');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    // each answer its own nonce
    const again = (await t.fetch('/docs')).headers.get('content-security-policy');
    expect(again).not.toBe(csp);

    const bundle = await t.fetch('/docs/standalone.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    await bundle.arrayBuffer();

    const icon = await t.fetch('/favicon.ico');
    expect(icon.status).toBe(204);
  });

  it(
    'renders the API title in Chromium with every request going to this server and no CSP violation',
    { timeout: 120_000 },
    async () => {
      await using browser = await openBrowser();
      const { page, context } = browser;
      const requested: string[] = [];
      context.on('request', (r) => requested.push(r.url()));
      const problems: string[] = [];
      page.on('console', (m) => {
        if (/Content[- ]Security[- ]Policy|Refused to/i.test(m.text())) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      const documentLoaded = page.waitForResponse(`${t.baseUrl}/v1/openapi.json`, { timeout: 60_000 });
      await page.goto(`${t.baseUrl}/docs`, { waitUntil: 'load' });
      await documentLoaded;
      const doc = (await (await t.fetch('/v1/openapi.json')).json()) as { info: { title: string } };
      await page.getByText(doc.info.title).first().waitFor({ state: 'visible', timeout: 60_000 });
      // every font the rendered page uses has been loaded (or failed): a font from another host would show here
      await page.evaluate('document.fonts.ready.then(() => undefined)');
      await browser.screenshot('docs');
      expect(problems).toEqual([]);
      expect(requested.length).toBeGreaterThan(1);
      const foreign = requested.filter(
        (u) => !u.startsWith(`${t.baseUrl}/`) && !u.startsWith('data:') && !u.startsWith('blob:'),
      );
      expect(foreign).toEqual([]);
    },
  );
});
