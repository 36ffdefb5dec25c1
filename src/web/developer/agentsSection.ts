import type { AgentConnector, AgentRun } from '../../agents/connectors.js';
import { SCOPES } from '../../domain/scopes.js';
import { html, type SafeHtml } from '../html.js';
import type { OrgChoice } from './developerAccess.js';
import { csrfField, message, secretOnce } from './viewParts.js';

/** Scopes a connector can be delegated (never agent:invoke: a run cannot start runs). */
export const CONNECTOR_SCOPES = SCOPES.filter((x) => x !== 'agent:invoke');

/** What the connector form holds (kept when a submission is refused). */
export interface ConnectorFormValues {
  org: string;
  name: string;
  url: string;
  scopes: string[];
}

export interface OrgConnectors {
  org: OrgChoice;
  connectors: AgentConnector[];
}

export interface RoomRuns {
  room: { id: string; name: string };
  runs: AgentRun[];
}

export interface AgentsSectionOptions {
  csrf: string;
  /** Organizations the user administers, with their connectors. */
  orgs: OrgConnectors[];
  form?: ConnectorFormValues;
  once?: { title: string; secret: string };
  message?: { kind: 'error' | 'notice'; text: string };
}

/**
 * Agent connectors of the organizations the user owns or administers: the form (`Organization`,
 * `Connector name`, `Connector URL`, one checkbox `Delegate <scope>` per delegable scope, `Create connector`), a
 * signing secret just made shown once, each connector with `Activate`/`Deactivate`.
 */
export function agentsSection(o: AgentsSectionOptions): SafeHtml {
  return html`<section id="agents" aria-labelledby="agents-title">
<h2 id="agents-title">Agent connectors</h2>
<p class="muted">Endpoints that run an agent for a room (<code>POST /v1/rooms/{roomId}/agent-runs</code>, scope <code>agent:invoke</code>). Each run gets a delegated token: the invoking person's scopes and the connector's in common, that one room only, until the run ends. Organization owners and admins register them.</p>
${message(o.message)}
${
  o.once
    ? secretOnce({
        title: o.once.title,
        secret: o.once.secret,
        warning:
          "This signing secret is shown only once: copy it now into your connector's configuration (it verifies invocations like a webhook). It cannot be shown again.",
      })
    : null
}
${
  o.orgs.length
    ? connectorForm(
        o.csrf,
        o.orgs.map((x) => x.org),
        o.form,
      )
    : html`<p>You do not administer an organization, so there are no connectors to manage.</p>`
}
${o.orgs.map(
  (x) => html`<h3>${x.org.name}</h3>
${x.connectors.length ? connectorTable(o.csrf, x.connectors) : html`<p class="muted">No connectors in this organization.</p>`}`,
)}
</section>`;
}

function connectorTable(csrf: string, rows: AgentConnector[]): SafeHtml {
  return html`<div class="scroll" role="region" aria-label="Agent connectors" tabindex="0"><table><thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">Scopes</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.map(
  (
    c,
  ) => html`<tr><td>${c.name} <span class="muted"><code>${c.id}</code></span></td><td><code>${c.url}</code></td><td>${c.scopes.join(' ')}</td><td>${c.active ? html`<span class="badge ok">active</span>` : html`<span class="badge off">inactive</span>`}</td>
<td><form method="post" action="/settings/developer/connectors/${c.active ? 'deactivate' : 'activate'}">${csrfField(csrf)}<input type="hidden" name="connector" value="${c.id}"><button type="submit" aria-label="${c.active ? 'Deactivate' : 'Activate'} ${c.name}">${c.active ? 'Deactivate' : 'Activate'}</button></form></td></tr>`,
)}
</tbody></table></div>`;
}

function connectorForm(csrf: string, orgs: OrgChoice[], f?: ConnectorFormValues): SafeHtml {
  const v = f ?? { org: orgs[0]?.id ?? '', name: '', url: '', scopes: ['mcp:tools'] };
  return html`<form method="post" action="/settings/developer/connectors">
${csrfField(csrf)}
<label for="connector-org">Organization</label>
<select id="connector-org" name="org" required>${orgs.map((x) => html`<option value="${x.id}"${v.org === x.id ? html` selected` : null}>${x.name}</option>`)}</select>
<label for="connector-name">Connector name</label>
<input id="connector-name" name="name" required maxlength="100" value="${v.name}">
<label for="connector-url">Connector URL</label>
<input id="connector-url" name="url" type="url" required maxlength="2048" placeholder="https://agent.example.com/invoke" value="${v.url}" aria-describedby="connector-url-hint">
<p class="muted" id="connector-url-hint">Where invocations are sent, signed like webhooks. Addresses in internal networks are refused.</p>
<fieldset><legend>Scopes it may be delegated</legend>
<div class="choices">${CONNECTOR_SCOPES.map((x) => html`<label class="check"><input type="checkbox" name="scopes" value="${x}"${v.scopes.includes(x) ? html` checked` : null}> Delegate ${x}</label>`)}</div>
</fieldset>
<button type="submit" class="primary">Create connector</button>
</form>`;
}
