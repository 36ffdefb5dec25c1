import { describe, expect, it } from 'vitest';
import { DEFAULT_AFTER_LOGIN, safeNext } from '../../src/web/safeNext.js';
import { Browser, field, startOAuthServer } from '../oauth/oauthHelpers.js';

// Open redirect after sign-in: /login's `next` is accepted only as a same-origin path
// after normalization; one function (safeNext) decides, for the form and for an already signed-in visit.

const BASE = 'http://svc.test:8080';

/** Spellings that a browser, or a later hop decoding once more, would take off-site. */
const OFF_SITE = [
  '/.//evil.com',
  '/%2e//evil.com',
  '/%2E//evil.com',
  '/a/..//evil.com',
  '/a/%2e%2e//evil.com',
  '/.%2e//evil.com',
  '/././/evil.com',
  '//evil.com',
  '///evil.com',
  '/\\evil.com',
  '\\\\evil.com',
  '/%5cevil.com',
  '/%5Cevil.com',
  '%2f%2fevil.com',
  '/%2f%2fevil.com',
  '/%2F/evil.com',
  '/%252f%252fevil.com',
  '/%252e//evil.com',
  'https://evil.com',
  'http://svc.test:8080.evil.com/',
  'HTTPS://evil.com',
  'javascript:alert(1)',
  'JavaScript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '/\t/evil.com',
  '/\n/evil.com',
  '/\r\n/evil.com',
  '\t//evil.com',
  ' //evil.com',
  '/%09/evil.com',
  '/%0d%0aLocation:%20https://evil.com',
  '/x\u0000y',
  '/x\u007fy',
  'evil.com',
  '',
  '?next=//evil.com',
  `/${'a'.repeat(9000)}`,
];

/** Same-origin paths, kept as they are. */
const SAME_SITE: [string, string][] = [
  ['/settings/developer', '/settings/developer'],
  ['/oauth/consent?request=abc.def-ghi_jkl', '/oauth/consent?request=abc.def-ghi_jkl'],
  ['/settings/apps?x=//evil.com', '/settings/apps?x=//evil.com'],
  ['/settings/apps#//evil.com', '/settings/apps#//evil.com'],
  ['/a/../settings/apps', '/settings/apps'],
  ['/settings//apps', '/settings//apps'],
];

describe('security: open redirect after sign-in', () => {
  it('open redirect through next: a table of off-site spellings all fall back to the default page', () => {
    for (const next of OFF_SITE) expect(safeNext(BASE, next), JSON.stringify(next)).toBe(DEFAULT_AFTER_LOGIN);
    for (const next of [undefined, null, 42, ['/settings/developer'], { a: 1 }])
      expect(safeNext(BASE, next)).toBe(DEFAULT_AFTER_LOGIN);
    for (const [next, expected] of SAME_SITE) expect(safeNext(BASE, next), next).toBe(expected);
    // whatever is accepted resolves to a path on BASE_URL's origin and is a fixed point
    for (const next of [...OFF_SITE, ...SAME_SITE.map(([n]) => n)]) {
      const target = safeNext(BASE, next);
      expect(new URL(target, BASE).origin, next).toBe(new URL(BASE).origin);
      expect(target.startsWith('/') && !target.startsWith('//'), next).toBe(true);
      expect(safeNext(BASE, target)).toBe(target);
    }
  });

  it("open redirect through the sign-in form: for every spelling the Location stays on the server's origin", async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const origin = new URL(t.baseUrl).origin;
    for (const next of OFF_SITE.filter((n) => n.length < 200)) {
      // posted straight in the form (a page that rendered it could have been tampered with)
      const b = new Browser(t.baseUrl);
      const page = await (await b.get('/login')).text();
      const res = await b.post('/login', {
        csrf: field(page, 'csrf'),
        next,
        email: w.owner.email,
        password: w.owner.password,
      });
      expect(res.status, JSON.stringify(next)).toBe(303);
      const location = res.headers.get('location')!;
      expect(new URL(location, t.baseUrl).origin, `${JSON.stringify(next)} → ${location}`).toBe(origin);
      expect(location, JSON.stringify(next)).toBe(DEFAULT_AFTER_LOGIN);
      // and an already signed-in visit to /login?next=… redirects the same way
      const again = await b.get(`/login?next=${encodeURIComponent(next)}`);
      expect(again.status, JSON.stringify(next)).toBe(303);
      expect(again.headers.get('location'), JSON.stringify(next)).toBe(DEFAULT_AFTER_LOGIN);
    }
    const kept = await new Browser(t.baseUrl).signIn(w.owner.email, w.owner.password, '/settings/developer');
    expect(kept.headers.get('location')).toBe('/settings/developer');
  });
});
