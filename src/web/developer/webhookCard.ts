import { DEFAULT_ROTATION_DAYS, isRotating, MAX_ROTATION_DAYS } from '../../webhooks/index.js';
import { html, type SafeHtml } from '../html.js';
import { deliveriesChart } from './charts.js';
import type { WebhookPageData } from './developerData.js';
import { DEVELOPER_PAGES } from './developerNav.js';
import { csrfField, message, when } from './viewParts.js';
import { subscriptionFields } from './webhookFields.js';
import { deliveryState, onceSecret } from './webhookParts.js';

export interface WebhookPageOptions {
  csrf: string;
  item: WebhookPageData;
  now: Date;
  once?: { title: string; secret: string };
  message?: { kind: 'error' | 'notice'; text: string };
}

/**
 * One webhook's page: URL, room, API version, status, custom header names (never values), rotation; the
 * reason it was disabled automatically, if it was; its last day of deliveries per hour as a chart; the buttons
 * to send a test event, activate/deactivate, start a rotation (period in days, 1 to 90) or complete it, recover
 * failed deliveries, delete; its filter and throttle; and its delivery history with `Redeliver`.
 */
export function webhookPageSection({ csrf, item, now, once, message: msg }: WebhookPageOptions): SafeHtml {
  const w = item.webhook;
  const id = `webhook-${w.id}`;
  const title = `${id}-title`;
  const hidden = html`${csrfField(csrf)}<input type="hidden" name="room" value="${w.roomId}"><input type="hidden" name="webhook" value="${w.id}">`;
  const ids = html`<input type="hidden" name="webhook" value="${w.id}">`;
  const post = (action: string, button: string, cls = '') =>
    html`<form method="post" action="/settings/developer/webhooks/${action}">${hidden}<button type="submit"${cls ? html` class="${cls}"` : null} aria-describedby="${title}">${button}</button></form>`;
  const rotating = isRotating(w, now);
  const rotation = rotating
    ? html`<form method="get" action="/settings/developer/webhooks/complete-rotation">${ids}<button type="submit" aria-describedby="${title}">Complete rotation</button></form>`
    : html`<form method="get" action="/settings/developer/webhooks/rotate">${ids}
<label for="${id}-period">Rotation period (days)</label>
<div class="cells"><input id="${id}-period" name="periodDays" type="number" min="1" max="${MAX_ROTATION_DAYS}" step="1" value="${DEFAULT_ROTATION_DAYS}" required>
<button type="submit" aria-describedby="${title}">Start rotation</button></div></form>`;
  return html`<section id="webhooks" aria-label="Webhook">
<p><a href="${DEVELOPER_PAGES.webhooks.path}">← All webhooks</a></p>
${message(msg)}
${once ? onceSecret(once) : null}
<article class="card" id="${id}" aria-labelledby="${title}">
<h2 id="${title}"><code>${w.url}</code></h2>
<p>${w.active ? html`<span class="badge ok">Active</span>` : html`<span class="badge off">Inactive</span>`}
Room <strong>${item.room.name}</strong> <span class="muted">(${item.room.organization ? item.room.organization.name : 'Personal'})</span>
· API version <code>${w.apiVersion}</code> · custom headers: ${w.headerNames.length ? w.headerNames.map((n, i) => html`${i ? ', ' : ''}<code>${n}</code>`) : 'none'}
· created ${when(w.createdAt)}</p>
<p>Event types: ${w.eventTypes?.length ? w.eventTypes.map((t, i) => html`${i ? ', ' : ''}<code>${t}</code>`) : 'all'}
· max deliveries per second: ${w.maxDeliveriesPerSecond ?? 'unlimited'}</p>
${
  !w.active && w.disabledReason
    ? html`<p class="error" role="alert">Disabled automatically ${when(w.disabledAt)}: ${w.disabledReason}</p>`
    : null
}
${
  rotating
    ? html`<p role="note">Rotating: deliveries are signed with the current and the next secret until ${when(w.rotationEndsAt)}, when the next secret replaces the current one. Complete the rotation once your receiver uses the next secret.</p>`
    : null
}
<div class="actions">
${w.active ? post('test', 'Send test event', 'primary') : null}
${w.active ? post('deactivate', 'Deactivate') : post('activate', 'Activate', 'primary')}
${rotation}
<form method="get" action="/settings/developer/webhooks/delete">${ids}<button type="submit" class="danger" aria-describedby="${title}">Delete</button></form>
</div>
<h3>Last 24 hours</h3>
${deliveriesChart(`${id}-chart`, item.hours)}
${w.active ? recoverForm(id, title, hidden, now) : null}
<details><summary>Event types and throttle</summary>
<form method="post" action="/settings/developer/webhooks/update">${hidden}
${subscriptionFields(id, w.eventTypes ?? [], w.maxDeliveriesPerSecond === null ? '' : String(w.maxDeliveriesPerSecond))}
<button type="submit" class="primary" aria-describedby="${title}">Save event types and throttle</button></form></details>
<h3>Delivery history</h3>
${deliveryTable(item, hidden)}
</article>
</section>`;
}

/**
 * `Recover`: every delivery that finally failed since a time (UTC, default an hour ago) is queued again.
 * The earliest allowed time is left to the server (the retention), which says so when it is passed.
 */
function recoverForm(id: string, title: string, hidden: SafeHtml, now: Date): SafeHtml {
  const hourAgo = new Date(now.getTime() - 3_600_000).toISOString().slice(0, 16);
  return html`<details><summary>Recover failed deliveries</summary>
<form method="post" action="/settings/developer/webhooks/recover">${hidden}
<label for="${id}-since">Failed since (UTC)</label>
<input id="${id}-since" name="since" type="datetime-local" value="${hourAgo}" max="${now.toISOString().slice(0, 16)}" required aria-describedby="${id}-since-hint">
<p class="muted" id="${id}-since-hint">Sends again, once, every event whose delivery finally failed since then (same event id, new delivery id). Events delivered meanwhile or already queued are skipped.</p>
<button type="submit" aria-describedby="${title}">Recover failed deliveries</button></form></details>`;
}

function deliveryTable(item: WebhookPageData, hidden: SafeHtml): SafeHtml {
  if (!item.deliveries.length)
    return html`<p class="muted">No deliveries yet. Events of the room are delivered here as they happen.</p>`;
  const rows = item.deliveries.map(
    (d) => html`<tr>
<td><code>${d.eventType}</code>${d.redeliveryOf ? html` <span class="muted">(redelivery)</span>` : null}</td>
<td>${d.statusCode ?? html`<span class="muted">${d.lastError ? `no response (${d.lastError})` : 'none yet'}</span>`}</td>
<td>${deliveryState(d)}</td>
<td>${d.durationMs === null ? html`<span class="muted">–</span>` : `${d.durationMs} ms`}</td>
<td>${when(d.finalizedAt ?? d.createdAt)}</td>
<td><div class="cells"><a href="/settings/developer/webhooks/delivery?webhook=${encodeURIComponent(item.webhook.id)}&amp;delivery=${encodeURIComponent(d.id)}">Details</a>
<form method="post" action="/settings/developer/webhooks/redeliver">${hidden}<input type="hidden" name="delivery" value="${d.id}"><button type="submit">Redeliver</button></form></div></td>
</tr>`,
  );
  return html`<div class="scroll" role="region" aria-label="Delivery history" tabindex="0"><table><thead><tr><th scope="col">Event type</th><th scope="col">Status code</th><th scope="col">Success</th><th scope="col">Duration</th><th scope="col">Time</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody></table></div>${item.more ? html`<p class="muted">Only the ${item.deliveries.length} newest deliveries are shown; the API lists them all (GET /v1/rooms/{roomId}/webhooks/{webhookId}/deliveries).</p>` : null}`;
}
