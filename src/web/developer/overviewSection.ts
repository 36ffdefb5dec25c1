import { html, type SafeHtml } from '../html.js';
import type { OrgConnectors } from './agentsSection.js';
import { usageMeter } from './charts.js';
import type { ApiKey, ContextUsage, RoomWebhooks } from './developerData.js';
import { DEVELOPER_PAGES } from './developerNav.js';
import type { OrgApprovals } from './mcpClientsSection.js';

export interface OverviewSummary {
  keys: ApiKey[];
  rooms: RoomWebhooks[];
  mcp: { mcpClients: OrgApprovals[]; connectors: OrgConnectors[] };
  usage: ContextUsage[];
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `/settings/developer`: one card per page with what it holds now, and this month's units. */
export function overviewSection(o: OverviewSummary): SafeHtml {
  const activeKeys = o.keys.filter((k) => !k.revokedAt).length;
  const hooks = o.rooms.flatMap((r) => r.webhooks);
  const inactive = hooks.filter((h) => !h.webhook.active).length;
  const approvals = o.mcp.mcpClients.reduce((n, x) => n + x.approvals.length, 0);
  const connectors = o.mcp.connectors.reduce((n, x) => n + x.connectors.length, 0);
  const card = (key: keyof typeof DEVELOPER_PAGES, text: SafeHtml | string) =>
    html`<section class="card" aria-labelledby="overview-${key}"><h2 id="overview-${key}"><a href="${DEVELOPER_PAGES[key].path}">${DEVELOPER_PAGES[key].name}</a></h2><p>${text}</p></section>`;
  return html`<p>Keys and webhooks for your scripts and services, the MCP clients and agent connectors of your organizations, and what your credentials did.</p>
<div class="cards">
${card('keys', `${plural(activeKeys, 'active key', 'active keys')}. Issue one key per purpose, with only the scopes it needs.`)}
${card('webhooks', `${plural(hooks.length, 'webhook', 'webhooks')}${inactive ? ` (${inactive} inactive)` : ''} in ${plural(o.rooms.length, 'room', 'rooms')} you manage.`)}
${card('mcp', `${plural(approvals, 'approved MCP client', 'approved MCP clients')}, ${plural(connectors, 'agent connector', 'agent connectors')}.`)}
${card('runs', 'The latest runs of agents in your rooms, with their errors.')}
${card('activity', 'Your latest requests and the units used this month.')}
</div>
<h2>Units this month</h2>
${o.usage.map((u, i) => usageMeter({ id: `usage-${i}`, label: u.label, used: u.used, limit: u.limit, resetsAt: u.resetsAt }))}
<p class="muted">Signed in on another computer or phone? <a href="/logout">Sign out on every device</a>.</p>`;
}
