import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');

/** Headless, sandbox off (root in containers), and nothing that talks to the network on its own. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Time for installing Chromium with apt-get on a fresh machine (the hook that calls `ensureChromium`). */
export const INSTALL_TIMEOUT_MS = 600_000;

/** Installs Chromium with scripts/ensure-chromium.sh when /usr/bin/chromium is missing. */
export function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  execFileSync('sh', [path.join(ROOT, 'scripts', 'ensure-chromium.sh')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
  });
}

export interface TestBrowser extends AsyncDisposable {
  context: BrowserContext;
  page: Page;
  /** Saves a full-page screenshot as test-output/screenshots/<name>.png for review. */
  screenshot(name: string): Promise<void>;
}

export interface OpenBrowserOptions {
  /** false: a browser with JavaScript off (the pages must work without it). */
  javaScript?: boolean;
}

/**
 * A fresh headless Chromium with its own throwaway profile (playwright passes it as `--user-data-dir`);
 * dispose to close it and delete the profile.
 */
export async function openBrowser(o: OpenBrowserOptions = {}): Promise<TestBrowser> {
  ensureChromium();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
    javaScriptEnabled: o.javaScript ?? true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return {
    context,
    page,
    screenshot: async (name) =>
      void (await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })),
    [Symbol.asyncDispose]: close,
  };
}
