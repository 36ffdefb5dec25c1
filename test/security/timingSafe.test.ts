import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { safeEqual, sha256Hex } from '../../src/domain/hashing.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  CALLBACK,
  pkcePair,
  postForm,
  registerClient,
} from '../oauth/oauthHelpers.js';

// Timing attacks on secret comparison: every check of a presented secret against a stored
// one goes through a constant-time comparison. Proven two ways: the calls are observed on the real paths
// (safeEqual wrapped in a spy), and a static check finds no `===` between secret-looking values anywhere.

vi.mock('../../src/domain/hashing.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/domain/hashing.js')>();
  return { ...real, safeEqual: vi.fn(real.safeEqual) };
});

const ROOT = path.resolve(import.meta.dirname, '../..');
const sourceFiles = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );

const SECRETISH = /(hash|secret|signature|sig|csrf|verifier|challenge|mac|digest|password|apikey)$/i;
const LITERAL = /^(undefined|null|true|false|''|""|``|'[^']*'|"[^"]*"|\d+)$/;
const OPERAND = String.raw`([A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[\d+\])*|'[^']*'|"[^"]*"|\d+)`;
const COMPARISON = new RegExp(`${OPERAND}\\s*(===|!==|==|!=)\\s*${OPERAND}`, 'g');

describe('security: timing-safe comparisons', () => {
  it('timing attack on API keys, OAuth tokens, client secrets, PKCE, CSRF, session cookies and cursors: each check runs through safeEqual', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const spy = vi.mocked(safeEqual);
    const compared = () => spy.mock.calls.flat();
    const calledWith = (value: string) => compared().includes(value);

    spy.mockClear();
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    expect(calledWith(sha256Hex(w.key)), 'API key hash').toBe(true);

    const page = await call(t, 'GET', '/v1/rooms?limit=1', { key: w.key });
    await call(t, 'POST', '/v1/rooms', { key: w.key, body: { name: 'Second' } });
    const next = await call(t, 'GET', '/v1/rooms?limit=1', { key: w.key });
    expect(page.status).toBe(200);
    spy.mockClear();
    expect(
      (await call(t, 'GET', `/v1/rooms?limit=1&cursor=${encodeURIComponent(next.body.nextCursor)}`, { key: w.key }))
        .status,
    ).toBe(200);
    expect(spy.mock.calls.length, 'cursor signature').toBeGreaterThanOrEqual(2);

    const app = await registerClient(t, { type: 'confidential' });
    const { verifier, challenge } = pkcePair();
    const b = new Browser(t.baseUrl);
    spy.mockClear();
    const { callback } = await authorizeInBrowser(
      b,
      authorizeUrl({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: CALLBACK,
        scope: 'me:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: `${t.baseUrl}/v1`,
      }),
      w.owner,
    );
    expect(spy.mock.calls.length, 'CSRF tokens of the sign-in and consent forms').toBeGreaterThanOrEqual(2);
    spy.mockClear();
    expect((await b.get('/settings/apps')).status).toBe(200);
    expect(calledWith(sha256Hex(b.cookies.get('svc_session')!)), 'session token hash').toBe(true);
    const code = callback.searchParams.get('code')!;
    spy.mockClear();
    const tokens = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: CALLBACK,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(tokens.status).toBe(200);
    expect(calledWith(sha256Hex(app.clientSecret!)), 'client secret hash').toBe(true);
    expect(calledWith(sha256Hex(code)), 'authorization code hash').toBe(true);
    expect(calledWith(createHash('sha256').update(verifier).digest('base64url')) && calledWith(challenge), 'PKCE').toBe(
      true,
    );

    spy.mockClear();
    expect((await call(t, 'GET', '/v1/me', { key: tokens.body.access_token })).status).toBe(200);
    expect(calledWith(sha256Hex(tokens.body.access_token)), 'access token hash').toBe(true);
    spy.mockClear();
    await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(calledWith(sha256Hex(tokens.body.refresh_token)), 'refresh token hash').toBe(true);
  });

  it('the receiver-side verifier and password checks use crypto.timingSafeEqual', () => {
    for (const file of ['src/webhooks/verifyWebhook.ts', 'src/domain/hashing.ts']) {
      expect(fs.readFileSync(path.join(ROOT, file), 'utf8'), file).toMatch(/timingSafeEqual\(/);
    }
  });

  it('no source file compares secret-looking values with === or !== (static check)', () => {
    const offenders: string[] = [];
    for (const file of ['src', 'rest', 'mcp'].flatMap(sourceFiles)) {
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*)/.test(line)) return;
        for (const m of line.matchAll(COMPARISON)) {
          const [, left, , right] = m;
          const last = (x: string) => x.split(/\??\./).pop()!;
          if (LITERAL.test(left) || LITERAL.test(right)) continue;
          if (/typeof\s*$/.test(line.slice(0, m.index))) continue;
          if (SECRETISH.test(last(left)) || SECRETISH.test(last(right)))
            offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        }
      });
    }
    expect(offenders).toEqual([]);
  });
});
