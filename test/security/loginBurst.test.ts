import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_IP, LOGIN_WINDOW_S } from '../../src/web/loginThrottle.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { Browser, field, startOAuthServer } from '../oauth/oauthHelpers.js';

// Password guessing in a parallel burst: every attempt is counted before its password is
// checked, atomically in the database, so N parallel wrong passwords get at most the limit of checks (the
// others answer 429 unchecked), and the count is shared by every server on the database.

/** `n` sign-ins for `email` posted at once from one browser (one CSRF token). */
async function burst(b: Browser, email: string, n: number, password = 'wrong-guess'): Promise<number[]> {
  const page = await (await b.get('/login')).text();
  const csrf = field(page, 'csrf');
  const answers = await Promise.all(Array.from({ length: n }, () => b.post('/login', { csrf, email, password })));
  return answers.map((r) => r.status);
}

describe('security: sign-in throttle under a parallel burst', () => {
  for (const n of [25, 60]) {
    it(`password guessing with ${n} parallel wrong passwords: at most ${LOGIN_FAILURES_PER_ACCOUNT} are checked, then 429 until the window passes`, async () => {
      await using env = await startOAuthServer();
      const { t, w, clock } = env;
      const b = new Browser(t.baseUrl);
      const statuses = await burst(b, w.owner.email, n);
      const checked = statuses.filter((x) => x !== 429);
      expect(
        checked.every((x) => x === 401),
        statuses.join(),
      ).toBe(true);
      // never more checks than the account's limit; exactly that many while the burst stays within the address's
      // own limit (beyond it, an attempt early in the account's count may come late in the address's, on
      // PostgreSQL's parallel connections, and be refused by that limit instead: fewer checks, never more)
      if (n <= LOGIN_FAILURES_PER_IP) expect(checked.length, statuses.join()).toBe(LOGIN_FAILURES_PER_ACCOUNT);
      else {
        expect(checked.length, statuses.join()).toBeGreaterThan(0);
        expect(checked.length, statuses.join()).toBeLessThanOrEqual(LOGIN_FAILURES_PER_ACCOUNT);
      }
      // the right password is refused unchecked while the window lasts, with the time left
      const blocked = await b.signIn(w.owner.email, w.owner.password);
      expect(blocked.status).toBe(429);
      const retryAfter = Number(blocked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(LOGIN_WINDOW_S);
      clock.advance((LOGIN_WINDOW_S - 60) * 1000);
      expect((await b.signIn(w.owner.email, w.owner.password)).status).toBe(429);
      clock.advance(61 * 1000);
      const after = await b.signIn(w.owner.email, w.owner.password);
      expect(after.status).toBe(303);
      expect(after.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(true);
    });
  }

  it('password guessing across servers: two processes on one database share the count', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-burst-'));
    try {
      const now = () => new Date();
      await using a = await startTestServer({ dataDir, now });
      await using b = await startTestServer({ dataDir, now });
      const w = await createWorld(a.rt);
      const first = await burst(new Browser(a.baseUrl), w.owner.email, 3);
      const second = await burst(new Browser(b.baseUrl), w.owner.email, 6);
      expect([...first, ...second].filter((x) => x !== 429).length).toBe(LOGIN_FAILURES_PER_ACCOUNT);
      expect((await new Browser(b.baseUrl).signIn(w.owner.email, w.owner.password)).status).toBe(429);
      expect((await new Browser(a.baseUrl).signIn(w.owner.email, w.owner.password)).status).toBe(429);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
