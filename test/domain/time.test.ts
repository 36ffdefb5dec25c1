import { describe, expect, it, vi } from 'vitest';
import { iso, isoWithOffset, monthPeriod, nextMonthStart } from '../../src/domain/time.js';

// what each function was before it kept a day's and a month's text: V8's own formatting every time
const reference = {
  iso: (d: Date) => d.toISOString(),
  monthPeriod: (d: Date) => d.toISOString().slice(0, 7),
  nextMonthStart: (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
  isoWithOffset: (d: Date) => `${d.toISOString().slice(0, 19)}+00:00`,
};

const DAY = 86_400_000;
const YEAR_0 = Date.UTC(2000, 0, 1) - 2000 * 365.2425 * DAY;
const YEAR_10000 = Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1;

/** A deterministic stream of instants: the same days again and again, their edges, other eras. */
function* instants(seed: number, n: number): Generator<number> {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const now = Date.UTC(2026, 10, 29, 18, 0, 0, 0);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.4)
      yield now + Math.floor(next() * 3 * DAY) - DAY; // three days around now, in any order
    else if (r < 0.55)
      yield Date.UTC(2026, 11, 1) + Math.floor(next() * 5) - 2; // a month's and a day's edge
    else if (r < 0.65)
      yield Math.floor(next() * 5) - 2; // the epoch's edge, negative times included
    else if (r < 0.85)
      yield Math.floor(YEAR_0 + next() * (YEAR_10000 - YEAR_0)); // any four-digit year
    else if (r < 0.9)
      yield YEAR_10000 + Math.floor(next() * 2 * DAY) - DAY; // into the extended years
    else yield -62_198_755_200_000 + Math.floor(next() * 1000 * DAY); // year 0 and before (±YYYYYY)
  }
}

describe('time formatting', () => {
  it('writes what toISOString writes, in any order of days, months and eras', () => {
    for (const t of instants(7, 20_000)) {
      const d = new Date(t);
      expect(iso(d), `${t}`).toBe(reference.iso(d));
      expect(monthPeriod(d), `${t}`).toBe(reference.monthPeriod(d));
      expect(nextMonthStart(d).getTime(), `${t}`).toBe(reference.nextMonthStart(d).getTime());
      expect(isoWithOffset(d), `${t}`).toBe(reference.isoWithOffset(d));
    }
  });

  it('keeps no month it did not compute right: the years 0–99, then the same month 1900 years later', () => {
    const year50 = new Date('0050-01-15T00:00:00.000Z');
    const year1950 = new Date('1950-01-15T00:00:00.000Z');
    for (const d of [year50, year1950, year50, year1950]) {
      expect(monthPeriod(d)).toBe(reference.monthPeriod(d));
      expect(nextMonthStart(d).getTime()).toBe(reference.nextMonthStart(d).getTime());
    }
  });

  it("formats a request's times (now, a minute ago, the month and its reset) without V8's formatter once seen", () => {
    const now = Date.UTC(2026, 10, 29, 18, 30);
    const formatted = (t: number) => [iso(new Date(t)), iso(new Date(t - 60_000)), monthPeriod(new Date(t))];
    formatted(now);
    isoWithOffset(nextMonthStart(new Date(now)));
    const spy = vi.spyOn(Date.prototype, 'toISOString');
    try {
      for (let i = 0; i < 100; i++) {
        expect(formatted(now + i * 7)[2]).toBe('2026-11');
        expect(isoWithOffset(nextMonthStart(new Date(now + i * 7)))).toBe('2026-12-01T00:00:00+00:00');
      }
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses an invalid date as before: RangeError, and an invalid next month', () => {
    iso(new Date(Date.UTC(2026, 10, 29))); // a day kept
    const invalid = new Date(NaN);
    expect(() => iso(invalid)).toThrow(RangeError);
    expect(() => monthPeriod(invalid)).toThrow(RangeError);
    expect(() => isoWithOffset(invalid)).toThrow(RangeError);
    expect(Number.isNaN(nextMonthStart(invalid).getTime())).toBe(true);
  });
});
