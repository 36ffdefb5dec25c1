import type { OAuthClientApproval } from '../../oauth/clientApprovals.js';
import { html, type SafeHtml } from '../html.js';
import type { OrgChoice } from './developerAccess.js';
import { csrfField, message, when } from './viewParts.js';

/** An organization the user administers, with the MCP clients approved for it. */
export interface OrgApprovals {
  org: OrgChoice;
  approvals: OAuthClientApproval[];
}

export interface McpClientsSectionOptions {
  csrf: string;
  /** Only organizations where the user is owner or admin. */
  orgs: OrgApprovals[];
  message?: { kind: 'error' | 'notice'; text: string };
  form?: { url: string; org: string };
}

/**
 * "Approved MCP clients": MCP clients identified by a client metadata document
 * URL (https://…) may start OAuth only once an organization owner or admin approved that URL or its origin
 * here. Members of the organization may then connect them, acting in that organization.
 */
export function mcpClientsSection(o: McpClientsSectionOptions): SafeHtml {
  const head = html`<h2 id="mcp-clients-title">Approved MCP clients</h2>
<p class="muted">MCP clients such as VS Code or Claude identify themselves by the URL of their client metadata document. Approve that URL (or its https origin) once, and the members of your organization can connect the client with one consent.</p>`;
  if (!o.orgs.length) {
    return html`<section id="mcp-clients" aria-labelledby="mcp-clients-title">${head}
${message(o.message)}
<p>Only an owner or admin of an organization approves MCP clients. Ask one of them, or the server's operator (<code>svc client allow --url …</code>).</p>
</section>`;
  }
  const f = o.form ?? { url: '', org: o.orgs[0].org.id };
  const options = o.orgs.map(
    ({ org }) => html`<option value="${org.id}"${f.org === org.id ? html` selected` : null}>${org.name}</option>`,
  );
  const lists = o.orgs.map(
    ({ org, approvals }) => html`<h3>${org.name}</h3>
${
  approvals.length
    ? html`<div class="scroll" role="region" aria-label="Approved MCP clients of ${org.name}" tabindex="0"><table><thead><tr><th scope="col">Client-id URL or origin</th><th scope="col">Approved</th><th scope="col">Action</th></tr></thead><tbody>${approvals.map(
        (a) => html`<tr>
<td id="approval-${a.id}"><code>${a.pattern}</code></td><td>${when(a.createdAt)}</td>
<td><form method="get" action="/settings/developer/mcp-clients/remove"><input type="hidden" name="approval" value="${a.id}"><button type="submit" aria-describedby="approval-${a.id}">Remove</button></form></td>
</tr>`,
      )}</tbody></table></div>`
    : html`<p>No MCP clients approved for ${org.name}.</p>`
}`,
  );
  return html`<section id="mcp-clients" aria-labelledby="mcp-clients-title">${head}
${message(o.message)}
<form method="post" action="/settings/developer/mcp-clients">
${csrfField(o.csrf)}
<label for="mcp-client-url">Client-id URL or origin</label>
<input id="mcp-client-url" name="url" type="url" required maxlength="2000" value="${f.url}" placeholder="https://vscode.dev/oauth/client-metadata.json" aria-describedby="mcp-client-url-hint">
<p class="muted" id="mcp-client-url-hint">An https URL of a client metadata document (approves that client), or an https origin such as https://app.example (approves every client published there).</p>
<label for="mcp-client-org">Organization</label>
<select id="mcp-client-org" name="org">${options}</select>
<button type="submit" class="primary">Approve</button>
</form>
${lists}
</section>`;
}
