import { FILTERABLE_EVENT_TYPES, MAX_DELIVERIES_PER_SECOND } from '../../webhooks/index.js';
import { html, type SafeHtml } from '../html.js';

/**
 * The event-type checkboxes and the throttle field, shared by the creation form and each webhook's card
 * (`idPrefix` keeps their ids apart).
 */
export function subscriptionFields(idPrefix: string, eventTypes: readonly string[], maxPerSecond: string): SafeHtml {
  const boxes = FILTERABLE_EVENT_TYPES.map((t) => {
    const id = `${idPrefix}-event-${t.replace(/[^a-z0-9]/g, '-')}`;
    return html`<div class="check"><input type="checkbox" id="${id}" name="eventTypes" value="${t}"${eventTypes.includes(t) ? html` checked` : null}><label for="${id}"><code>${t}</code></label></div>`;
  });
  return html`<fieldset aria-describedby="${idPrefix}-events-hint"><legend>Event types</legend><div class="choices">${boxes}</div>
<p class="muted" id="${idPrefix}-events-hint">Only the ticked types are delivered. None ticked: every type, including types added later.</p></fieldset>
<label for="${idPrefix}-max-per-second">Max deliveries per second</label>
<input id="${idPrefix}-max-per-second" name="maxPerSecond" type="number" min="1" max="${MAX_DELIVERIES_PER_SECOND}" step="1" value="${maxPerSecond}" aria-describedby="${idPrefix}-max-per-second-hint">
<p class="muted" id="${idPrefix}-max-per-second-hint">Optional, 1 to ${MAX_DELIVERIES_PER_SECOND}. Deliveries above it wait; other webhooks are not slowed. Empty: unlimited.</p>`;
}
