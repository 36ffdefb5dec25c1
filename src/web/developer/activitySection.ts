import { html, type SafeHtml } from '../html.js';
import { usageMeter } from './charts.js';
import type { ContextUsage } from './developerData.js';
import type { ActivityRow } from './recentActivity.js';
import { when } from './viewParts.js';

/** The units used this month by each of the user's billing contexts, against the limit. */
export function usageSection(usage: ContextUsage[]): SafeHtml {
  return html`<section id="usage" aria-labelledby="usage-title">
<h2 id="usage-title">Units this month</h2>
<p class="muted">Each request costs units from the monthly allowance of the context it acts in (an organization, or your personal scope).</p>
${usage.map((u, i) => usageMeter({ id: `usage-${i}`, label: u.label, used: u.used, limit: u.limit, resetsAt: u.resetsAt }))}
</section>`;
}

/**
 * The units used this month, a link to the connected apps and agents (/settings/apps, where grants are listed
 * and revoked) and the user's recent API activity from the audit log: their own rows only, newest first.
 */
export function activitySection(rows: ActivityRow[], usage: ContextUsage[]): SafeHtml {
  const table = rows.length
    ? html`<div class="scroll" role="region" aria-label="Recent API activity" tabindex="0"><table><thead><tr><th scope="col">Time</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Credential</th><th scope="col">Context</th><th scope="col">Units</th></tr></thead>
<tbody>${rows.map(
        (r) => html`<tr>
<td>${when(r.at)}</td>
<td><code>${r.method} ${r.route}</code>${r.surface === 'mcp' ? html` <span class="muted">(MCP)</span>` : null}</td>
<td>${r.statusCode}${r.errorCode ? html` <span class="muted">${r.errorCode}</span>` : null}</td>
<td>${r.via}</td>
<td>${r.context}</td>
<td>${r.units}</td>
</tr>`,
      )}</tbody></table></div>`
    : html`<p>No API requests yet.</p>`;
  return html`${usageSection(usage)}
<section id="activity" aria-labelledby="activity-title">
<h2 id="activity-title">Recent API activity</h2>
<p class="muted">The latest requests made with your keys and by the apps and agents acting for you, newest first.</p>
${table}
</section>
<section id="apps" aria-labelledby="apps-title">
<h2 id="apps-title">Connected apps and agents</h2>
<p>Apps and AI agents you allowed to act for you over OAuth are listed under <a href="/settings/apps">Apps and agents</a>, where you can revoke them.</p>
</section>`;
}
