import { html, type SafeHtml } from '../html.js';
import { page } from '../layout.js';
import { activitySection } from './activitySection.js';
import { agentsSection, type AgentsSectionOptions } from './agentsSection.js';
import { COPY_SCRIPT_PATH } from './copyScript.js';
import type { DeveloperData } from './developerData.js';
import { keysSection, type KeysSectionOptions } from './keysSection.js';
import { mcpClientsSection, type McpClientsSectionOptions } from './mcpClientsSection.js';
import { message } from './viewParts.js';
import { webhooksSection, type WebhooksSectionOptions } from './webhooksSection.js';

/** What one response adds to the stored data: a message, a refused form's values, a secret shown once. */
export interface DeveloperViewState {
  message?: { kind: 'error' | 'notice'; text: string };
  keys?: Pick<KeysSectionOptions, 'form' | 'once' | 'message'>;
  webhooks?: Pick<WebhooksSectionOptions, 'form' | 'once' | 'message'>;
  mcpClients?: Pick<McpClientsSectionOptions, 'form' | 'message'>;
  agents?: Pick<AgentsSectionOptions, 'form' | 'once' | 'message'>;
}

export interface DeveloperViewOptions {
  email: string;
  csrf: string;
  data: DeveloperData;
  now: Date;
  state: DeveloperViewState;
}

/** Whether the response shows a secret once (and so loads the copy button's script). */
export const showsSecret = (state: DeveloperViewState): boolean =>
  !!(state.keys?.once || state.webhooks?.once || state.agents?.once);

/** `/settings/developer`: API keys, webhooks, connected apps, recent activity. */
export function developerView(o: DeveloperViewOptions): SafeHtml {
  const { data, state } = o;
  return page({
    title: 'Developer settings',
    wide: true,
    signedIn: { email: o.email, csrf: o.csrf },
    body: html`<nav aria-label="On this page"><a href="#keys">API keys</a> · <a href="#webhooks">Webhooks</a> · <a href="#mcp-clients">Approved MCP clients</a> · <a href="#agents">Agent connectors</a> · <a href="#apps">Connected apps and agents</a> · <a href="#activity">Recent API activity</a></nav>
${message(state.message)}
${keysSection({ csrf: o.csrf, keys: data.keys, orgs: data.orgs, ...state.keys })}
${webhooksSection({ csrf: o.csrf, rooms: data.rooms, now: o.now, ...state.webhooks })}
${mcpClientsSection({ csrf: o.csrf, orgs: data.mcpClients, ...state.mcpClients })}
${agentsSection({ csrf: o.csrf, orgs: data.connectors, runs: data.runs, ...state.agents })}
${activitySection(data.activity)}
${showsSecret(state) ? html`<script src="${COPY_SCRIPT_PATH}" defer></script>` : null}`,
  });
}
