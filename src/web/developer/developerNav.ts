import { html, type SafeHtml } from '../html.js';

export const DEVELOPER_PATH = '/settings/developer';

/** The pages of the developer settings, in the order of their navigation. */
export const DEVELOPER_PAGES = {
  overview: { path: DEVELOPER_PATH, name: 'Overview' },
  keys: { path: `${DEVELOPER_PATH}/keys`, name: 'API keys' },
  webhooks: { path: `${DEVELOPER_PATH}/webhooks`, name: 'Webhooks' },
  mcp: { path: `${DEVELOPER_PATH}/mcp`, name: 'MCP clients and connectors' },
  runs: { path: `${DEVELOPER_PATH}/agent-runs`, name: 'Agent runs' },
  activity: { path: `${DEVELOPER_PATH}/activity`, name: 'API activity' },
} as const;

export type DeveloperPageName = keyof typeof DEVELOPER_PAGES;

/** A webhook's own page. */
export const webhookPath = (webhookId: string): string =>
  `${DEVELOPER_PAGES.webhooks.path}/${encodeURIComponent(webhookId)}`;

/** The side navigation of the developer settings; the current page is marked for assistive technology. */
export function developerNav(current: DeveloperPageName): SafeHtml {
  const links = (Object.keys(DEVELOPER_PAGES) as DeveloperPageName[]).map((k) => {
    const p = DEVELOPER_PAGES[k];
    return html`<li><a href="${p.path}"${k === current ? html` aria-current="page"` : null}>${p.name}</a></li>`;
  });
  return html`<nav class="side" aria-label="Developer settings"><ul>${links}</ul></nav>`;
}
