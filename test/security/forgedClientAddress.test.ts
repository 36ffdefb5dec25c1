import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { call, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { Browser, field, startOAuthServer } from '../oauth/oauthHelpers.js';

// Forged client addresses: X-Forwarded-For is believed only when the operator names the
// proxies (SVC_TRUST_PROXY), never because the peer is loopback; the per-address counters (unauthenticated
// /v1 and /mcp requests, sign-in failures) use the address so derived.

const guess = (i: number) => `svc_live_guess${i}${'A'.repeat(34)}`;
const forged = (i: number) => ({ 'x-forwarded-for': `203.0.113.${i + 1}` });

async function keyGuesses(t: TestServer, n: number, headers: (i: number) => Record<string, string>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(t, 'GET', '/v1/me', { key: guess(i), headers: headers(i) })).status);
  return out;
}

async function mcpGuesses(t: TestServer, n: number, headers: (i: number) => Record<string, string>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++)
    out.push((await postMcp(t, toolCall('get_me'), { token: guess(i), headers: headers(i) })).status);
  return out;
}

/** A wrong-password sign-in sent with `headers`. */
async function wrongSignIn(base: string, email: string, headers: Record<string, string>) {
  const b = new Browser(base);
  const page = await (await b.get('/login')).text();
  const res = await b.request('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ csrf: field(page, 'csrf'), email, password: 'wrong-guess' }).toString(),
  });
  return res.status;
}

describe('security: forged client address', () => {
  it('X-Forwarded-For spoofing from a loopback peer: without SVC_TRUST_PROXY a forged address gets no fresh budget on /v1 and /mcp', async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '5' } });
    const rest = await keyGuesses(t, 8, forged);
    expect(rest).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(await mcpGuesses(t, 2, (i) => forged(100 + i))).toEqual([429, 429]);
  });

  it('X-Forwarded-For spoofing against the sign-in throttle: a new forged address per guess is still throttled', async () => {
    await using env = await startOAuthServer();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push(await wrongSignIn(env.t.baseUrl, env.w.owner.email, forged(i)));
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it("with SVC_TRUST_PROXY=1 the address the proxy forwards is the client's, for each counter", async () => {
    await using t = await startTestServer({ env: { SVC_RATE_LIMIT: '5', SVC_TRUST_PROXY: '1' } });
    // each forwarded address has its own budget; one address alone runs out
    expect(await keyGuesses(t, 8, forged)).toEqual(Array(8).fill(401));
    expect(await keyGuesses(t, 6, () => forged(50))).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await mcpGuesses(t, 6, () => forged(60))).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await mcpGuesses(t, 1, () => forged(61))).toEqual([401]);
    // the proxy appends what it saw: only the nearest hop counts, an address the client wrote in front does not
    const prepended = await keyGuesses(t, 2, (i) => ({ 'x-forwarded-for': `198.51.100.${i}, 203.0.113.51` }));
    expect(prepended).toEqual([429, 429]);

    await using env = await startOAuthServer({ SVC_TRUST_PROXY: '1' });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push(await wrongSignIn(env.t.baseUrl, env.w.owner.email, forged(i)));
    expect(statuses).toEqual(Array(7).fill(401));
  });

  it('SVC_TRUST_PROXY takes off, a hop count or proxy addresses and ranges; trusting every hop is refused', () => {
    const base = { LOG_LEVEL: 'silent' };
    expect(loadConfig(base).trustProxy).toBe(false);
    for (const off of ['', 'off', 'false', '0'])
      expect(loadConfig({ ...base, SVC_TRUST_PROXY: off }).trustProxy).toBe(false);
    expect(loadConfig({ ...base, SVC_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...base, SVC_TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8, 192.0.2.7' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.7',
    ]);
    for (const bad of ['true', 'on', '*', '10.0.0.0/33', 'fd00::/129', 'proxy.internal', '10.0.0.0/8/1', ',']) {
      expect(() => loadConfig({ ...base, SVC_TRUST_PROXY: bad }), bad).toThrow(/SVC_TRUST_PROXY must be/);
    }
  });
});
