import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/scopes.js';
import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';

export interface ConsentViewOptions {
  clientName: string;
  kind: 'app' | 'agent';
  scopes: string[];
  /** `BASE_URL/v1` or `BASE_URL/mcp`. */
  resource: string;
  redirectUri: string;
  /** The organizations offered, the first is preselected. */
  organizations: { id: string; name: string }[];
  /** Whether the personal context is offered (not for a metadata-document client approved only by organizations). */
  personal?: boolean;
  /** A Client ID Metadata Document client's client-id URL, shown so the user sees who publishes it. */
  clientUrl?: string;
  request: string;
  csrf: string;
  email: string;
}

/**
 * The consent screen: the client's name, every requested scope with its meaning,
 * the acting context (an organization of the user or the personal scope; it decides what the token can
 * reach and who is billed), and the buttons `Allow` and `Deny`.
 */
export function consentView(o: ConsentViewOptions): SafeHtml {
  const what = o.resource.endsWith('/mcp') ? 'the MCP tools (/mcp)' : 'the REST API (/v1)';
  const contexts = [
    ...o.organizations.map(
      (org, i) => html`<option value="${org.id}"${i === 0 ? html` selected` : null}>${org.name}</option>`,
    ),
    o.personal === false ? null : html`<option value="personal">Personal (no organization)</option>`,
  ];
  return page({
    title: `Allow ${o.clientName}?`,
    signedIn: { email: o.email, csrf: o.csrf },
    body: html`<p><strong>${o.clientName}</strong>${o.clientUrl ? html` (published at <code>${o.clientUrl}</code>)` : null}${o.kind === 'agent' ? html`, an <strong>AI agent</strong> that would act for you,` : null}
asks to use ${what} as you (${o.email}), with these permissions:</p>
<dl class="scopes">${o.scopes.map((sc) => html`<dt>${sc}</dt><dd>${SCOPE_DESCRIPTIONS[sc as Scope] ?? sc}</dd>`)}</dl>
<p class="muted">It never gets more than you can do yourself. After you answer you go back to ${new URL(o.redirectUri).origin}. You can revoke access at any time under <a href="/settings/apps">Apps and agents</a>.</p>
<form method="post" action="/oauth/consent">
<input type="hidden" name="csrf" value="${o.csrf}">
<input type="hidden" name="request" value="${o.request}">
<label for="organization">Act as</label>
<select id="organization" name="organization" aria-describedby="organization-hint">${contexts}</select>
<p class="muted" id="organization-hint">What it can reach, and who is billed for its use.</p>
<div class="buttons">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  });
}
