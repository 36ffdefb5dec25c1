import type { AgentRun } from '../../agents/connectors.js';
import { html, type SafeHtml } from '../html.js';
import type { RoomRuns } from './agentsSection.js';
import { when } from './viewParts.js';

/** Characters of a run's input and of an error's summary shown in a table cell. */
const EXCERPT = 80;

/**
 * A stored error in one line: the `message` (or `error`/`code`) of a JSON error, nested ones included, else its
 * first line; cut to a cell's width. The whole text stays behind a disclosure.
 */
export function errorSummary(raw: string): string {
  const brace = raw.indexOf('{');
  // `connector_failed: {"error":…}`: the prefix, then the message of the JSON after it
  const prefix = brace > 0 ? raw.slice(0, brace).trim().replace(/:$/, '') : '';
  let line = raw.split('\n', 1)[0].trim();
  try {
    let v: unknown = JSON.parse(brace >= 0 ? raw.slice(brace) : raw);
    for (let depth = 0; depth < 4 && v && typeof v === 'object'; depth++) {
      const o = v as Record<string, unknown>;
      const inner = o.error ?? o.message;
      if (typeof inner === 'string') {
        line = inner;
        if (typeof o.message === 'string' && o.message !== inner) line = `${inner}: ${o.message}`;
        if (prefix) line = `${prefix}: ${line}`;
        break;
      }
      v = inner;
    }
  } catch {
    // not JSON: the first line
  }
  return line.length > EXCERPT ? `${line.slice(0, EXCERPT - 1)}…` : line;
}

const STATUS_BADGE: Record<string, string> = { succeeded: 'ok', failed: 'off', canceled: 'off', expired: 'off' };

function runError(r: AgentRun): SafeHtml | null {
  if (!r.error) return null;
  return html`<details><summary><span class="summary-line">${errorSummary(r.error)}</span></summary><pre>${r.error}</pre></details>`;
}

/** The recent agent runs of each room the user can read that has any: connector, status, input, times, error. */
export function runsSection(rooms: RoomRuns[], connectors: Map<string, string>): SafeHtml {
  return html`<section id="agent-runs" aria-labelledby="agent-runs-intro">
<p class="muted" id="agent-runs-intro">The newest runs of each room you can read that has any. A run's full error is behind its summary.</p>
${
  rooms.length
    ? rooms.map(
        (room) => html`<h2>${room.room.name}</h2>
<div class="scroll" role="region" aria-label="Agent runs of ${room.room.name}" tabindex="0"><table><thead><tr><th scope="col">Connector</th><th scope="col">Status</th><th scope="col">Input</th><th scope="col">Created</th><th scope="col">Finished</th><th scope="col">Error</th></tr></thead><tbody>
${room.runs.map(
  (r) => html`<tr><td>${connectors.get(r.connectorId) ?? 'Deleted connector'}<br><code class="muted">${r.id}</code></td>
<td><span class="badge ${STATUS_BADGE[r.status] ?? ''}">${r.status}</span></td>
<td>${r.input.text.length > EXCERPT ? `${r.input.text.slice(0, EXCERPT - 1)}…` : r.input.text}</td>
<td>${when(r.createdAt)}</td><td>${when(r.finishedAt, '–')}</td><td class="error-cell">${runError(r)}</td></tr>`,
)}
</tbody></table></div>`,
      )
    : html`<p class="muted">No agent runs yet.</p>`
}
</section>`;
}
