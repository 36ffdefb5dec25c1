import type { ApiKey } from '../../domain/apiKeys.js';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../domain/scopes.js';
import { html, type SafeHtml } from '../html.js';
import type { OrgChoice } from './developerAccess.js';
import { csrfField, message, secretOnce, when } from './viewParts.js';

/** What the key form holds (kept when a submission is refused). */
export interface KeyFormValues {
  name: string;
  scopes: string[];
  mode: 'live' | 'test';
  /** An organization id of the user, or `personal`. */
  context: string;
}

export interface KeysSectionOptions {
  csrf: string;
  keys: ApiKey[];
  orgs: OrgChoice[];
  form?: KeyFormValues;
  /** A key just issued: its token is shown this once. */
  once?: { name: string; token: string };
  message?: { kind: 'error' | 'notice'; text: string };
}

/** The key form's defaults: no scope ticked (one token per purpose), test mode, the first organization. */
export const defaultKeyForm = (orgs: OrgChoice[]): KeyFormValues => ({
  name: '',
  scopes: [],
  mode: 'test',
  context: orgs[0]?.id ?? 'personal',
});

export const contextName = (orgs: OrgChoice[], organizationId: string | null): string =>
  organizationId ? (orgs.find((o) => o.id === organizationId)?.name ?? organizationId) : 'Personal';

const scopeId = (scope: string) => `scope-${scope.replace(/[^a-z]+/g, '-')}`;

/**
 * API keys: the form (`Name`, one checkbox per scope labelled with the scope and its
 * meaning beside it, `Mode` with `live` and `test`, the acting context, `Create key`), the token of a key
 * just issued shown once, and the list (name, prefix…last 4, scopes, mode, context, created, last used),
 * each active key with a `Revoke` button that leads to a confirmation.
 */
export function keysSection(o: KeysSectionOptions): SafeHtml {
  const f = o.form ?? defaultKeyForm(o.orgs);
  const scopeBoxes = SCOPES.map(
    (scope) => html`<div class="choice">
<input type="checkbox" id="${scopeId(scope)}" name="scopes" value="${scope}" aria-describedby="${scopeId(scope)}-desc"${f.scopes.includes(scope) ? html` checked` : null}>
<label for="${scopeId(scope)}">${scope}</label> <span class="muted" id="${scopeId(scope)}-desc">${SCOPE_DESCRIPTIONS[scope]}</span>
</div>`,
  );
  const contexts = [
    ...o.orgs.map(
      (org) =>
        html`<option value="${org.id}"${f.context === org.id ? html` selected` : null}>${org.name} (organization)</option>`,
    ),
    html`<option value="personal"${f.context === 'personal' ? html` selected` : null}>Personal (no organization)</option>`,
  ];
  const mode = (v: 'live' | 'test', text: string) =>
    html`<option value="${v}"${f.mode === v ? html` selected` : null}>${text}</option>`;
  return html`<section id="keys" aria-labelledby="keys-title">
<p class="muted" id="keys-title">A key acts as an app for you, with only the scopes it was issued with, in one organization or your personal scope. Issue one key per purpose.</p>
${message(o.message)}
${
  o.once
    ? secretOnce({
        title: `Key “${o.once.name}” created.`,
        secret: o.once.token,
        warning:
          'This token is shown only once: copy it now and keep it in a secret store. Never commit it, post it in chat or mail, or use it from browser code.',
      })
    : null
}
${keyList(o.keys, o.orgs)}
<h2 id="key-new">Create a key</h2>
<form method="post" action="/settings/developer/keys">
${csrfField(o.csrf)}
<label for="key-name">Name</label>
<input id="key-name" name="name" type="text" required maxlength="100" value="${f.name}" aria-describedby="key-name-hint">
<p class="muted" id="key-name-hint">What the key is for, e.g. “CI deploy bot”.</p>
<fieldset><legend>Scopes</legend><div class="choices">${scopeBoxes}</div></fieldset>
<label for="key-mode">Mode</label>
<select id="key-mode" name="mode" aria-describedby="key-mode-hint">${mode('live', 'live')}${mode('test', 'test')}</select>
<p class="muted" id="key-mode-hint"><code>live</code> keys (<code>svc_live_…</code>) are for production, <code>test</code> keys (<code>svc_test_…</code>) for verification.</p>
<label for="key-context">Context</label>
<select id="key-context" name="context" aria-describedby="key-context-hint">${contexts}</select>
<p class="muted" id="key-context-hint">The key reaches only this organization's rooms (or only your personal rooms), and its use is billed there.</p>
<button type="submit" class="primary">Create key</button>
</form>
</section>`;
}

function keyList(keys: ApiKey[], orgs: OrgChoice[]): SafeHtml {
  const newestFirst = [...keys].reverse();
  const active = newestFirst.filter((k) => !k.revokedAt);
  const revoked = newestFirst.filter((k) => k.revokedAt);
  const head = (last: string) =>
    html`<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Mode</th><th scope="col">Context</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">${last}</th></tr></thead>`;
  const cells = (k: ApiKey) => html`<td id="key-${k.id}-name"><strong>${k.name}</strong></td>
<td><code>${k.prefix}…${k.last4}</code></td>
<td>${k.scopes.map((sc, i) => html`${i ? ', ' : ''}<code>${sc}</code>`)}</td>
<td>${k.mode}</td>
<td>${contextName(orgs, k.organizationId)}</td>
<td>${when(k.createdAt)}</td>
<td>${when(k.lastUsedAt)}</td>`;
  const activeRows = active.map(
    (k) => html`<tr>
${cells(k)}
<td><form method="get" action="/settings/developer/keys/revoke"><input type="hidden" name="key" value="${k.id}"><button type="submit" aria-describedby="key-${k.id}-name">Revoke</button></form></td>
</tr>`,
  );
  const revokedRows = revoked.map(
    (k) => html`<tr>
${cells(k)}
<td><span class="badge off">Revoked</span> ${when(k.revokedAt)}</td>
</tr>`,
  );
  return html`<h2>Your keys</h2>
${active.length ? html`<div class="scroll" role="region" aria-label="Active keys" tabindex="0"><table id="active-keys">${head('Action')}<tbody>${activeRows}</tbody></table></div>` : html`<p>You have no active API keys.</p>`}
${
  revoked.length
    ? html`<details id="revoked-keys"><summary>Revoked keys (${revoked.length})</summary>
<div class="scroll" role="region" aria-label="Revoked keys" tabindex="0"><table>${head('Revoked')}<tbody>${revokedRows}</tbody></table></div></details>`
    : null
}`;
}
