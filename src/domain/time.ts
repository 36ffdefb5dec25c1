// The API's timestamps, formatted on every request (the audit row, the units' period and reset, a key's last use).
// `Date.prototype.toISOString` is a call into V8's runtime, made several times a request; the text of
// a time within a UTC day already seen is built here from the day's prefix and the time of day instead, and a
// month's period and reset are kept for the month. The same text as toISOString's, to the character
// (test/domain/time.test.ts compares them over the years this formats this way: 0000–9999).

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** The last UTC day formatted: its first instant, the next day's, and its `YYYY-MM-DDT`. */
let day = { start: 0, end: 0, prefix: '' };

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. Throws RangeError for an invalid date. */
export function iso(d: Date): string {
  const t = d.getTime();
  if (t >= day.start && t < day.end) {
    let ms = t - day.start;
    const h = Math.floor(ms / HOUR_MS);
    ms -= h * HOUR_MS;
    const m = Math.floor(ms / MINUTE_MS);
    ms -= m * MINUTE_MS;
    const s = Math.floor(ms / 1000);
    return `${day.prefix}${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(ms - s * 1000)}Z`;
  }
  const text = d.toISOString();
  // only the four-digit years' form (`YYYY-MM-DDTHH:mm:ss.sssZ`); the extended years' (±YYYYYY) always goes to V8
  if (text.length === 24) {
    const start = t - (((t % DAY_MS) + DAY_MS) % DAY_MS);
    day = { start, end: start + DAY_MS, prefix: text.slice(0, 11) };
  }
  return text;
}

/** The last UTC month seen: its first instant, the next month's, and its `YYYY-MM`. */
let month = { start: 0, end: 0, period: '' };

function monthOf(d: Date): typeof month {
  const t = d.getTime();
  if (t >= month.start && t < month.end) return month;
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const period = d.toISOString().slice(0, 7);
  const seen = { start, end, period };
  // kept only when it holds `d` (Date.UTC reads the years 0–99 as 1900–1999)
  if (t >= start && t < end) month = seen;
  return seen;
}

/** First instant of the next UTC month (monthly API units reset). */
export const nextMonthStart = (d: Date): Date => new Date(Number.isNaN(d.getTime()) ? NaN : monthOf(d).end);

/** `YYYY-MM` of the UTC month containing `d`. */
export const monthPeriod = (d: Date): string => monthOf(d).period;

/** The last time `isoWithOffset` wrote, and its text: the units' reset, the same all month. */
let offsetText = { t: NaN, text: '' };

/**
 * ISO 8601 with an explicit UTC offset (`2026-12-01T00:00:00+00:00`), as `Svc-Api-Units-Reset` states it. Not
 * through `iso`'s day: the reset is another day than the request's, and would make `iso` change days each time.
 */
export function isoWithOffset(d: Date): string {
  const t = d.getTime();
  if (t !== offsetText.t) offsetText = { t, text: `${d.toISOString().slice(0, 19)}+00:00` };
  return offsetText.text;
}
