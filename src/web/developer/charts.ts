import type { DeliveryHour } from '../../webhooks/deliveriesPerHour.js';
import { html, type SafeHtml } from '../html.js';

/** Colours with at least 3:1 contrast on white (graphics), told apart by a legend and a table too. */
const OK = '#1e7b34';
const FAILED = '#b3261e';
const PENDING = '#8a6d00';

const W = 720;
const H = 220;
const PAD = { left: 48, right: 8, top: 16, bottom: 36 };
/** Large enough to read when the chart shrinks to a phone's width. */
const FONT = 20;

const hourLabel = (iso: string) => `${iso.slice(11, 13)}:00`;

/**
 * A webhook's deliveries per hour as an inline SVG of stacked bars (successes, failures, pending), with the
 * same numbers in a table behind a disclosure. Everything drawn comes from counts and hour stamps, and every
 * text is escaped by `html`.
 */
export function deliveriesChart(id: string, hours: DeliveryHour[]): SafeHtml {
  const max = Math.max(1, ...hours.map((h) => h.succeeded + h.failed + h.pending));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, hours.length);
  const bar = Math.max(2, slot * 0.7);
  const y = (v: number) => (v / max) * plotH;
  const totals = hours.reduce(
    (t, h) => ({ ok: t.ok + h.succeeded, failed: t.failed + h.failed, pending: t.pending + h.pending }),
    { ok: 0, failed: 0, pending: 0 },
  );
  const bars = hours.map((h, i) => {
    const x = PAD.left + i * slot + (slot - bar) / 2;
    let top = PAD.top + plotH;
    const part = (n: number, fill: string) => {
      if (!n) return null;
      const hgt = y(n);
      top -= hgt;
      return html`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${bar.toFixed(1)}" height="${hgt.toFixed(1)}" fill="${fill}"></rect>`;
    };
    return html`<g>${part(h.succeeded, OK)}${part(h.failed, FAILED)}${part(h.pending, PENDING)}</g>`;
  });
  const ticks = hours
    .map((h, i) => ({ h, i }))
    .filter(({ i }) => i % 6 === 0)
    .map(
      ({ h, i }) =>
        html`<text x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle" font-size="${FONT}" fill="#3d3d45">${hourLabel(h.hour)}</text>`,
    );
  const rows = hours.map(
    (h) =>
      html`<tr><th scope="row">${h.hour.slice(0, 10)} ${hourLabel(h.hour)} UTC</th><td>${h.succeeded}</td><td>${h.failed}</td><td>${h.pending}</td></tr>`,
  );
  const summary = `${totals.ok} succeeded, ${totals.failed} failed${totals.pending ? `, ${totals.pending} pending` : ''} in the last ${hours.length} hours`;
  return html`<figure aria-labelledby="${id}-caption">
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-svg-title" xmlns="http://www.w3.org/2000/svg">
<title id="${id}-svg-title">Deliveries per hour: ${summary}</title>
<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${W - PAD.right}" y2="${PAD.top + plotH}" stroke="#8a8f98"></line>
<line x1="${PAD.left}" y1="${PAD.top}" x2="${W - PAD.right}" y2="${PAD.top}" stroke="#e4e4e8"></line>
<text x="${PAD.left - 8}" y="${PAD.top + 6}" text-anchor="end" font-size="${FONT}" fill="#3d3d45">${max}</text>
<text x="${PAD.left - 8}" y="${PAD.top + plotH + 6}" text-anchor="end" font-size="${FONT}" fill="#3d3d45">0</text>
${bars}
${ticks}
</svg>
<figcaption id="${id}-caption">Deliveries per hour (UTC), last ${hours.length} hours: ${summary}.</figcaption>
<div class="legend" aria-hidden="true"><span><span class="swatch" style="background:${OK}"></span>Succeeded</span><span><span class="swatch" style="background:${FAILED}"></span>Failed</span><span><span class="swatch" style="background:${PENDING}"></span>Pending</span></div>
<details><summary>Show the numbers</summary>
<div class="scroll" role="region" aria-label="Deliveries per hour" tabindex="0"><table><thead><tr><th scope="col">Hour</th><th scope="col">Succeeded</th><th scope="col">Failed</th><th scope="col">Pending</th></tr></thead><tbody>${rows}</tbody></table></div>
</details>
</figure>`;
}

export interface UsageMeterOptions {
  id: string;
  /** Who the units are billed to: an organization's name or `Personal`. */
  label: string;
  used: number;
  limit: number;
  /** When the count starts again (ISO, UTC). */
  resetsAt: string;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Units used this month against the limit, as an inline SVG bar with the figures in words beside it. */
export function usageMeter(o: UsageMeterOptions): SafeHtml {
  const share = o.limit > 0 ? Math.min(1, o.used / o.limit) : 1;
  const pct = Math.round(share * 1000) / 10;
  const fill = share >= 0.9 ? FAILED : share >= 0.75 ? PENDING : '#0b57c2';
  const words = `${fmt(o.used)} of ${fmt(o.limit)} units used (${pct}%)`;
  return html`<figure aria-labelledby="${o.id}-caption">
<svg class="chart" viewBox="0 0 400 24" role="img" aria-labelledby="${o.id}-svg-title" xmlns="http://www.w3.org/2000/svg">
<title id="${o.id}-svg-title">${o.label}: ${words}</title>
<rect x="0" y="2" width="400" height="20" rx="4" fill="#ececf0" stroke="#8a8f98"></rect>
<rect x="0" y="2" width="${(o.used > 0 ? Math.max(3, 400 * share) : 0).toFixed(1)}" height="20" rx="4" fill="${fill}"></rect>
</svg>
<figcaption id="${o.id}-caption"><strong>${o.label}</strong>: ${words}; the count starts again on ${o.resetsAt.slice(0, 10)} at 00:00 UTC.</figcaption>
</figure>`;
}
