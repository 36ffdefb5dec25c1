import { html, type SafeHtml } from '../html.js';
import { page } from '../layout.js';
import { activitySection } from './activitySection.js';
import { agentsSection, type AgentsSectionOptions, type OrgConnectors, type RoomRuns } from './agentsSection.js';
import { COPY_SCRIPT_PATH } from './copyScript.js';
import type { ApiKey, ContextUsage, RoomWebhooks, WebhookPageData } from './developerData.js';
import { DEVELOPER_PAGES, developerNav, type DeveloperPageName } from './developerNav.js';
import type { OrgChoice } from './developerAccess.js';
import { keysSection, type KeysSectionOptions } from './keysSection.js';
import { mcpClientsSection, type McpClientsSectionOptions, type OrgApprovals } from './mcpClientsSection.js';
import type { ActivityRow } from './recentActivity.js';
import { overviewSection, type OverviewSummary } from './overviewSection.js';
import { runsSection } from './runsSection.js';
import { message } from './viewParts.js';
import { webhookPageSection } from './webhookCard.js';
import { webhooksSection, type WebhooksSectionOptions } from './webhooksSection.js';

/** What one response adds to the stored data: a message, a refused form's values, a secret shown once. */
export interface DeveloperViewState {
  message?: { kind: 'error' | 'notice'; text: string };
  keys?: Pick<KeysSectionOptions, 'form' | 'once' | 'message'>;
  /** With `webhookId`: that webhook's own page (when the user may manage it), else the list. */
  webhooks?: Pick<WebhooksSectionOptions, 'form' | 'once' | 'message'> & { webhookId?: string };
  mcpClients?: Pick<McpClientsSectionOptions, 'form' | 'message'>;
  agents?: Pick<AgentsSectionOptions, 'form' | 'once' | 'message'>;
}

/** The data of one page of the developer settings, read for the signed-in user. Holds no secret. */
export type DeveloperPageData =
  | { page: 'overview'; summary: OverviewSummary }
  | { page: 'keys'; keys: ApiKey[]; orgs: OrgChoice[] }
  | { page: 'webhooks'; rooms: RoomWebhooks[] }
  | { page: 'webhook'; webhook: WebhookPageData }
  | { page: 'mcp'; mcpClients: OrgApprovals[]; connectors: OrgConnectors[] }
  | { page: 'runs'; runs: RoomRuns[]; connectors: Map<string, string> }
  | { page: 'activity'; activity: ActivityRow[]; usage: ContextUsage[] };

export interface DeveloperViewOptions {
  email: string;
  csrf: string;
  data: DeveloperPageData;
  now: Date;
  state: DeveloperViewState;
}

/** Whether the response shows a secret once (and so loads the copy button's script). */
export const showsSecret = (state: DeveloperViewState): boolean =>
  !!(state.keys?.once || state.webhooks?.once || state.agents?.once);

/** One page of the developer settings, with the side navigation to the others. */
export function developerView(o: DeveloperViewOptions): SafeHtml {
  const { data, state } = o;
  const nav: DeveloperPageName = data.page === 'webhook' ? 'webhooks' : data.page;
  const title =
    data.page === 'overview' ? 'Developer settings' : data.page === 'webhook' ? 'Webhook' : DEVELOPER_PAGES[nav].name;
  return page({
    title,
    wide: true,
    side: developerNav(nav),
    signedIn: { email: o.email, csrf: o.csrf },
    body: html`${message(state.message)}
${body(o)}
${showsSecret(state) ? html`<script src="${COPY_SCRIPT_PATH}" defer></script>` : null}`,
  });
}

function body({ data, state, csrf, now }: DeveloperViewOptions): SafeHtml {
  switch (data.page) {
    case 'overview':
      return overviewSection(data.summary);
    case 'keys':
      return keysSection({ csrf, keys: data.keys, orgs: data.orgs, ...state.keys });
    case 'webhooks':
      return webhooksSection({ csrf, rooms: data.rooms, now, ...state.webhooks });
    case 'webhook':
      return webhookPageSection({ csrf, item: data.webhook, now, ...state.webhooks });
    case 'mcp':
      return html`${mcpClientsSection({ csrf, orgs: data.mcpClients, ...state.mcpClients })}
${agentsSection({ csrf, orgs: data.connectors, ...state.agents })}`;
    case 'runs':
      return runsSection(data.runs, data.connectors);
    case 'activity':
      return activitySection(data.activity, data.usage);
  }
}
