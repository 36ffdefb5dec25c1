import { API_V1, API_V2 } from '../../webhooks/index.js';
import { subscriptionFields } from './webhookFields.js';
import { html, type SafeHtml } from '../html.js';
import type { ManagedRoom } from './developerAccess.js';
import type { RoomWebhooks, WebhookWithHistory } from './developerData.js';
import { webhookPath } from './developerNav.js';
import { deliveryState, onceSecret } from './webhookParts.js';
import { csrfField, message, when } from './viewParts.js';

/** What the webhook form holds (kept when a submission is refused). */
export interface WebhookFormValues {
  room: string;
  url: string;
  apiVersion: string;
  /** Custom headers, one `Name: value` per line. */
  headers: string;
  /** The event types ticked (none: every stable type). */
  eventTypes: string[];
  /** Max deliveries per second as typed ('' for unlimited). */
  maxPerSecond: string;
}

export interface WebhooksSectionOptions {
  csrf: string;
  rooms: RoomWebhooks[];
  now: Date;
  form?: WebhookFormValues;
  /** A secret just made (creation, or the next secret of a rotation just started): shown this once. */
  once?: { title: string; secret: string };
  message?: { kind: 'error' | 'notice'; text: string };
}

/**
 * Webhooks of the rooms the user administers: the form (`Room`, `URL`,
 * `API version`, `Custom headers`, `Create webhook`), a secret just made shown once, and each room's
 * webhooks with their actions and delivery history.
 */
export function webhooksSection(o: WebhooksSectionOptions): SafeHtml {
  return html`<section id="webhooks" aria-labelledby="webhooks-title">
<p class="muted" id="webhooks-title">Signed deliveries of a room's events to your receiver. You manage the webhooks of the rooms you created and of every room of the organizations you own or administer.</p>
${message(o.message)}
${o.once ? onceSecret(o.once) : null}
${o.rooms.map(
  (
    r,
  ) => html`<h2>${r.room.name} <span class="muted">· ${r.room.organization ? r.room.organization.name : 'Personal'}</span></h2>
${r.webhooks.length ? html`<div class="scroll" role="region" aria-label="Webhooks of ${r.room.name}" tabindex="0"><table><thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Event types</th><th scope="col">Latest delivery</th></tr></thead><tbody>${r.webhooks.map(webhookRow)}</tbody></table></div>` : html`<p class="muted">No webhooks in this room.</p>`}`,
)}
${
  o.rooms.length
    ? html`<h2 id="webhook-new">Add a webhook</h2>
${webhookForm(
  o.csrf,
  o.rooms.map((r) => r.room),
  o.form,
)}`
    : html`<p>You do not administer any room, so there are no webhooks to manage.</p>`
}
</section>`;
}

function webhookRow({ webhook: w, deliveries }: WebhookWithHistory): SafeHtml {
  const last = deliveries[0];
  return html`<tr>
<td><a href="${webhookPath(w.id)}"><code>${w.url}</code></a></td>
<td>${w.active ? html`<span class="badge ok">Active</span>` : html`<span class="badge off">Inactive</span>`}</td>
<td>${w.eventTypes?.length ? w.eventTypes.map((t, i) => html`${i ? ', ' : ''}<code>${t}</code>`) : 'all'}</td>
<td>${last ? html`<code>${last.eventType}</code> ${deliveryState(last)} ${when(last.finalizedAt ?? last.createdAt)}` : html`<span class="muted">none yet</span>`}</td>
</tr>`;
}

function webhookForm(csrf: string, rooms: ManagedRoom[], f?: WebhookFormValues): SafeHtml {
  const v = f ?? {
    room: rooms[0]?.id ?? '',
    url: '',
    apiVersion: API_V2,
    headers: '',
    eventTypes: [],
    maxPerSecond: '',
  };
  const groups = new Map<string, ManagedRoom[]>();
  for (const r of rooms) {
    const label = r.organization ? r.organization.name : 'Personal';
    groups.set(label, [...(groups.get(label) ?? []), r]);
  }
  const options = [...groups].map(
    ([label, rs]) =>
      html`<optgroup label="${label}">${rs.map(
        (r) => html`<option value="${r.id}"${v.room === r.id ? html` selected` : null}>${r.name}</option>`,
      )}</optgroup>`,
  );
  const version = (value: string, text: string) =>
    html`<option value="${value}"${v.apiVersion === value ? html` selected` : null}>${text}</option>`;
  return html`<form method="post" action="/settings/developer/webhooks">
${csrfField(csrf)}
<label for="webhook-room">Room</label>
<select id="webhook-room" name="room" required>${options}</select>
<label for="webhook-url">URL</label>
<input id="webhook-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.com/svc" value="${v.url}" aria-describedby="webhook-url-hint">
<p class="muted" id="webhook-url-hint">An http or https address of your receiver. Addresses in internal networks are refused.</p>
<label for="webhook-api-version">API version</label>
<select id="webhook-api-version" name="apiVersion" aria-describedby="webhook-api-version-hint">${version(API_V2, `${API_V2} (v2, recommended)`)}${version(API_V1, `${API_V1} (v1, legacy)`)}</select>
<p class="muted" id="webhook-api-version-hint">The payload contract. It cannot be changed later: to move to another version, create a new webhook.</p>
<label for="webhook-headers">Custom headers</label>
<textarea id="webhook-headers" name="headers" rows="3" spellcheck="false" aria-describedby="webhook-headers-hint">${v.headers}</textarea>
<p class="muted" id="webhook-headers-hint">Optional, one <code>Name: value</code> per line, sent with every delivery (e.g. <code>Authorization: Bearer …</code>). Values are stored encrypted and never shown again. <code>Svc-Webhook-*</code>, <code>X-Webhook-*</code>, <code>Sunset</code> and <code>Deprecation</code> are set by the sender.</p>
${subscriptionFields('webhook', v.eventTypes, v.maxPerSecond)}
<button type="submit" class="primary">Create webhook</button>
</form>`;
}
