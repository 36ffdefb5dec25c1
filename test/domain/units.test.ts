import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { hashPassword, safeEqual, verifyPassword } from '../../src/domain/hashing.js';
import { newEventId, newId } from '../../src/domain/ids.js';
import { decodeCursor, encodeCursor } from '../../src/domain/paging.js';
import { isoWithOffset, monthPeriod, nextMonthStart } from '../../src/domain/time.js';
import { parseIdempotencyKey, fingerprint } from '../../src/auth/idempotency.js';
import { presentedToken } from '../../src/auth/credentials.js';

describe('identifiers', () => {
  it('are prefixed, time-ordered and strictly increasing within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('room', 1_800_000_000_000));
    expect(ids.every((id) => /^room_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    expect(newId('msg', 1_800_000_000_001) > ids[999].replace('room', 'msg')).toBe(true);
  });
  it('event ids are evt_ + 22 URL-safe characters (16 random bytes)', () => {
    const id = newEventId();
    expect(id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(id.slice(4), 'base64url')).toHaveLength(16);
  });
  it('event ids drawn from the random pool are all distinct across many refills, never one repeated', () => {
    // 256 ids per 4 KiB fill: 3,000 cross a dozen refills, and room ids made in between share the same pool
    const ids = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? (newId('room'), newEventId()) : newEventId()));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('cursors', () => {
  it('round-trip and refuse anything not signed by this server', () => {
    const c = encodeCursor('secret-a', 'room_X');
    expect(decodeCursor('secret-a', c)).toBe('room_X');
    for (const bad of [
      c.slice(0, -1),
      `${c}.x`,
      'abc',
      '',
      encodeCursor('secret-b', 'room_X'),
      `${Buffer.from('{"k":1}').toString('base64url')}.${c.split('.')[1]}`,
    ]) {
      expect(() => decodeCursor('secret-a', bad), bad).toThrowError(/Invalid cursor/);
    }
  });
});

describe('time', () => {
  it('computes the monthly reset in UTC', () => {
    expect(isoWithOffset(nextMonthStart(new Date('2026-12-31T23:59:59.999Z')))).toBe('2027-01-01T00:00:00+00:00');
    expect(monthPeriod(new Date('2026-02-28T10:00:00Z'))).toBe('2026-02');
  });
});

describe('secrets', () => {
  it('hashes passwords with scrypt and verifies them', async () => {
    const h = await hashPassword('correct horse');
    expect(h.startsWith('scrypt$')).toBe(true);
    expect(h).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', h)).toBe(true);
    expect(await verifyPassword('wrong horse', h)).toBe(false);
  });
  it('compares in constant time, false on different lengths', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
  it('reads Bearer and X-Api-Key, Authorization first', () => {
    expect(presentedToken({ authorization: 'Bearer abc' })).toBe('abc');
    expect(presentedToken({ authorization: 'bearer   abc ' })).toBe('abc');
    expect(presentedToken({ authorization: 'Basic abc', apiKey: 'k' })).toBeNull();
    expect(presentedToken({ apiKey: 'k' })).toBe('k');
    expect(presentedToken({})).toBeNull();
  });
});

describe('idempotency keys', () => {
  it('accept 1-255 printable characters and the quoted form', () => {
    expect(parseIdempotencyKey('"abc"')).toBe('abc');
    expect(parseIdempotencyKey('a'.repeat(255))).toHaveLength(255);
    // (`""` is no quoted empty key but a two-character one: the document's pattern allows it)
    expect(parseIdempotencyKey('""')).toBe('""');
    for (const bad of ['', 'a'.repeat(256), 'é', 'a\nb']) expect(() => parseIdempotencyKey(bad), bad).toThrow();
  });
  it('fingerprint ignores key order but not values', () => {
    expect(fingerprint({ a: 1, b: { c: 2, d: 3 } })).toBe(fingerprint({ b: { d: 3, c: 2 }, a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });
});

describe('configuration', () => {
  it('has the contract defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      baseUrl: 'http://localhost:3000',
      webhookBackoffBaseMs: 2000,
    });
    expect(c.database).toEqual({ kind: 'sqlite', file: './data/svc.sqlite' });
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://u@h/db',
    });
    expect(loadConfig({ SVC_RATE_LIMIT: '7', SVC_MONTHLY_UNITS: '9' }).plans.default).toEqual({
      rateLimit: 7,
      monthlyUnits: 9,
    });
  });
  it('names every bad variable precisely', () => {
    expect(() => loadConfig({ PORT: '-1', BASE_URL: 'ftp://x', SVC_RATE_LIMIT: '0' })).toThrowError(
      /PORT must be an integer >= 0[\s\S]*BASE_URL[\s\S]*SVC_RATE_LIMIT must be an integer >= 1/,
    );
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrowError(/SVC_SECRET: required when NODE_ENV=production/);
  });
});
