import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { absurdHeaderValue, shortNastyString } from './fuzzValues.js';
import { fuzzParams } from './fuzzWorld.js';
import { integrityProblems } from './integrity.js';
import { CALLBACK, field, obtainTokens, pkcePair, registerClient, startOAuthServer } from '../oauth/oauthHelpers.js';

// Fuzzing the OAuth endpoints and the sign-in form: generated forms and queries get RFC 6749 JSON
// errors (token, revoke) or HTML pages and redirects (authorize, login, consent), never a 5xx, and never a
// redirect anywhere but a registered redirect_uri or a same-origin path.

const RFC6749 = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);

type Env = Awaited<ReturnType<typeof startOAuthServer>>;
interface Form {
  body: string;
  headers: Record<string, string>;
}

/** `name=value` pairs as a form body: usually well encoded, sometimes broken percent-encoding or repeated names. */
function formOf(fields: fc.Arbitrary<[string, string][]>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fields.map((pairs) => new URLSearchParams(pairs).toString()) },
    { weight: 1, arbitrary: fields.map((pairs) => `${new URLSearchParams(pairs)}&${pairs[0]?.[0] ?? 'x'}=again`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%FF%FE=1',
        'a=%zz',
        '&&&=',
        '=',
        'grant_type',
        'a[b]=1&a[c]=2',
        `x=${'a'.repeat(20_000)}`,
        '\u0000=\u0000',
      ),
    },
  );
}

/** One form field: its name and a value. */
const pair = (name: string, value: fc.Arbitrary<string>): fc.Arbitrary<[string, string]> => value.map((v) => [name, v]);

const withShow = <T extends object>(v: T) =>
  Object.assign(v, { [fc.toStringMethod]: () => JSON.stringify(v).slice(0, 600) });

describe('OAuth endpoint and sign-in form fuzzing', () => {
  let env: Env;
  let pub: { clientId: string };
  let conf: { clientId: string; clientSecret: string | null };
  let refreshTokens: string[] = [];
  let accessTokens: string[] = [];
  beforeAll(async () => {
    env = await startOAuthServer();
    pub = await registerClient(env.t);
    conf = await registerClient(env.t, { type: 'confidential', name: 'Conf' });
    for (const c of [pub, pub, conf]) {
      const tok = await obtainTokens(env.t, env.w, c);
      refreshTokens.push(tok.refresh_token);
      accessTokens.push(tok.access_token);
    }
    refreshTokens = [...refreshTokens];
    accessTokens = [...accessTokens];
  });
  afterAll(async () => {
    await env?.t.close();
  });

  const value = (known: () => string[]) =>
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known()) }, { weight: 2, arbitrary: shortNastyString });
  const clientHeaders = () =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant({}) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom(pub.clientId, conf.clientId, 'cli_x'),
            fc.constantFrom(conf.clientSecret ?? '', 'wrong', ''),
          )
          .map(([id, s]) => ({ authorization: `Basic ${Buffer.from(`${id}:${s}`).toString('base64')}` })),
      },
      { weight: 1, arbitrary: absurdHeaderValue.map((v) => ({ authorization: `Basic ${v}` })) },
      {
        weight: 1,
        arbitrary: absurdHeaderValue.map((v) => ({
          authorization: `Basic ${Buffer.from(v, 'latin1').toString('base64')}`,
        })),
      },
    );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/x-www-form-urlencoded') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'application/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded; charset=latin1',
        '',
      ),
    },
  );

  async function postForm(path: string, f: Form) {
    const res = await env.t.fetch(path, {
      method: 'POST',
      headers: f.headers,
      body: f.body,
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text };
  }

  /** An RFC 6749 error (or a success for `okStatus`), never a 5xx; returns what is wrong, or null. */
  function oauthAnswerProblem(
    r: { status: number; text: string; headers: Headers },
    okStatus: number[],
  ): string | null {
    if (r.status >= 500) return 'server error';
    if (okStatus.includes(r.status)) return null;
    if (![400, 401].includes(r.status)) return `unexpected status ${r.status}`;
    let body: any;
    try {
      body = JSON.parse(r.text);
    } catch {
      return 'error is not JSON';
    }
    if (!RFC6749.has(body.error) || typeof body.error_description !== 'string') return 'not an RFC 6749 error';
    if (r.headers.get('cache-control') !== 'no-store') return 'error without Cache-Control: no-store';
    return null;
  }

  it('POST /oauth/token answers tokens or RFC 6749 errors', { timeout: 60_000 }, async () => {
    const fields = fc
      .tuple(
        fc.option(
          pair(
            'grant_type',
            fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom('authorization_code', 'refresh_token') },
              { weight: 1, arbitrary: fc.constantFrom('client_credentials', 'password', 'implicit', '') },
              { weight: 1, arbitrary: shortNastyString },
            ),
          ),
          { freq: 8 },
        ),
        fc.option(
          pair(
            'refresh_token',
            value(() => refreshTokens),
          ),
          { freq: 2 },
        ),
        fc.option(pair('code', shortNastyString), { freq: 3 }),
        fc.option(
          pair(
            'client_id',
            value(() => [pub.clientId, conf.clientId]),
          ),
          { freq: 2 },
        ),
        fc.option(
          pair(
            'client_secret',
            value(() => [conf.clientSecret ?? '']),
          ),
          { freq: 3 },
        ),
        fc.option(
          pair(
            'redirect_uri',
            value(() => [CALLBACK, `${CALLBACK}/`, 'https://evil.example/cb']),
          ),
          { freq: 3 },
        ),
        fc.option(
          pair(
            'code_verifier',
            value(() => [pkcePair().verifier]),
          ),
          { freq: 3 },
        ),
        fc.option(
          pair(
            'scope',
            value(() => ['me:read', 'me:read rooms:read', 'webhooks:write', '']),
          ),
          { freq: 3 },
        ),
        fc.option(
          pair(
            'resource',
            value(() => [`${env.t.baseUrl}/v1`, `${env.t.baseUrl}/mcp`, 'https://evil.example/']),
          ),
          { freq: 3 },
        ),
      )
      .map((ps) => ps.filter((p): p is [string, string] => p !== null));
    const form = fc
      .record({ body: formOf(fields), h: clientHeaders(), ct: contentType })
      .map(({ body, h, ct }) => withShow({ body, headers: { ...h, 'content-type': ct } }));
    await fc.assert(
      fc.asyncProperty(form, async (f) => {
        const r = await postForm('/oauth/token', f);
        const problem = oauthAnswerProblem(r, [200]);
        if (problem) throw new Error(`${problem}: ${r.status} ${r.text.slice(0, 300)}`);
        if (r.status === 200) {
          const body = JSON.parse(r.text);
          if (!/^svc_at_/.test(body.access_token) || body.token_type !== 'Bearer')
            throw new Error(`bad token response ${r.text}`);
          refreshTokens.push(body.refresh_token);
        }
      }),
      fuzzParams(300, 'oauth:token'),
    );
  });

  it('POST /oauth/revoke answers 200 or RFC 6749 errors', { timeout: 60_000 }, async () => {
    const fields = fc
      .tuple(
        fc.option(
          pair(
            'token',
            value(() => [...refreshTokens, ...accessTokens]),
          ),
          { freq: 6 },
        ),
        fc.option(
          pair('token_type_hint', fc.oneof(fc.constantFrom('access_token', 'refresh_token'), shortNastyString)),
          { freq: 2 },
        ),
        fc.option(
          pair(
            'client_id',
            value(() => [pub.clientId, conf.clientId]),
          ),
          { freq: 2 },
        ),
        fc.option(
          pair(
            'client_secret',
            value(() => [conf.clientSecret ?? '']),
          ),
          { freq: 3 },
        ),
      )
      .map((ps) => ps.filter((p): p is [string, string] => p !== null));
    const form = fc
      .record({ body: formOf(fields), h: clientHeaders(), ct: contentType })
      .map(({ body, h, ct }) => withShow({ body, headers: { ...h, 'content-type': ct } }));
    await fc.assert(
      fc.asyncProperty(form, async (f) => {
        const r = await postForm('/oauth/revoke', f);
        const problem = oauthAnswerProblem(r, [200]);
        if (problem) throw new Error(`${problem}: ${r.status} ${r.text.slice(0, 300)}`);
      }),
      fuzzParams(200, 'oauth:revoke'),
    );
  });

  it(
    'GET /oauth/authorize redirects only to the consent page or the registered redirect_uri, else shows a 400 page',
    { timeout: 60_000 },
    async () => {
      const { challenge } = pkcePair();
      const param = (name: string, known: string[]) =>
        fc.option(
          fc.tuple(
            fc.constant(name),
            fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...known) }, { weight: 2, arbitrary: shortNastyString }),
          ),
          { freq: 6 },
        );
      const query = fc
        .tuple(
          param('response_type', ['code', 'token', 'code id_token']),
          param('client_id', [pub.clientId, conf.clientId, 'cli_unknown']),
          param('redirect_uri', [
            CALLBACK,
            `${CALLBACK}?x=1`,
            `${CALLBACK}/`,
            'http://127.0.0.1:53682/Callback',
            'https://evil.example/cb',
            `${CALLBACK}#f`,
          ]),
          param('code_challenge', [challenge, 'short', 'a'.repeat(129)]),
          param('code_challenge_method', ['S256', 'plain', 's256']),
          param('resource', [
            `${env.t.baseUrl}/v1`,
            `${env.t.baseUrl}/mcp`,
            'https://evil.example/',
            `${env.t.baseUrl}/v1/`,
          ]),
          param('scope', ['me:read', 'me:read rooms:read', 'admin', 'mcp:tools agent:invoke']),
          param('state', ['st', '<script>', 'x'.repeat(2000)]),
        )
        .chain((ps) => {
          const pairs = ps.filter((p): p is [string, string] => p !== null);
          return fc.oneof(
            { weight: 6, arbitrary: fc.constant(new URLSearchParams(pairs).toString()) },
            {
              weight: 1,
              arbitrary: fc.constant(
                `${new URLSearchParams(pairs)}&client_id=${pub.clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}`,
              ),
            },
            { weight: 1, arbitrary: fc.constantFrom('%', 'client_id=%FF', 'redirect_uri=%zz', 'a[b]=1') },
          );
        })
        .map((q) => withShow({ q }));
      await fc.assert(
        fc.asyncProperty(query, async ({ q }) => {
          const res = await env.t.fetch(`/oauth/authorize?${q}`, { signal: AbortSignal.timeout(20_000) });
          const text = await res.text();
          const fail = (why: string) =>
            new Error(`${why}: ${res.status} ${res.headers.get('location') ?? ''} ${text.slice(0, 200)}`);
          if (res.status >= 500) throw fail('server error');
          if (res.status === 302) {
            const location = res.headers.get('location') ?? '';
            if (location.startsWith('/oauth/consent?request=')) return;
            const u = new URL(location);
            if (`${u.origin}${u.pathname}` !== CALLBACK) throw fail('redirect to an unregistered address');
            if (!u.searchParams.get('error') || u.searchParams.get('iss') !== env.t.baseUrl)
              throw fail('error redirect without error and iss');
            return;
          }
          if (res.status !== 400 || !(res.headers.get('content-type') ?? '').startsWith('text/html'))
            throw fail('neither a redirect nor a 400 page');
          if (res.headers.get('location')) throw fail('a 400 page that redirects');
        }),
        fuzzParams(300, 'oauth:authorize'),
      );
    },
  );

  it(
    'the /login and /oauth/consent forms answer pages or same-origin redirects, never a 5xx',
    { timeout: 60_000 },
    async () => {
      const page = await env.t.fetch('/login');
      const cookie = page.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = field(await page.text(), 'csrf');
      const fields = fc
        .tuple(
          fc.option(
            pair(
              'csrf',
              value(() => [csrf]),
            ),
            { freq: 6 },
          ),
          fc.option(
            pair(
              'email',
              value(() => [env.w.owner.email, 'nobody@example.test', '']),
            ),
            { freq: 6 },
          ),
          fc.option(
            pair(
              'password',
              fc.oneof(fc.constantFrom(env.w.owner.password, 'wrong-password', 'x'.repeat(15_000)), shortNastyString),
            ),
            { freq: 6 },
          ),
          fc.option(
            pair(
              'next',
              value(() => [
                '/settings/apps',
                '//evil.example/x',
                'https://evil.example/',
                '/\\evil.example',
                '/oauth/consent?request=x',
              ]),
            ),
            { freq: 3 },
          ),
          fc.option(pair('request', shortNastyString), { freq: 4 }),
          fc.option(pair('decision', fc.constantFrom('allow', 'deny', 'maybe')), { freq: 4 }),
        )
        .map((ps) => ps.filter((p): p is [string, string] => p !== null));
      const form = fc
        .record({
          path: fc.constantFrom('/login', '/oauth/consent', '/logout', '/settings/apps/revoke'),
          body: formOf(fields),
          cookie: fc.oneof(
            fc.constant(cookie),
            fc.constant(''),
            absurdHeaderValue.map((v) => `svc_session=${v}; svc_csrf=${v}`),
          ),
          origin: fc.oneof(
            { weight: 5, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.constantFrom(env.t.baseUrl, 'https://evil.example', 'null') },
          ),
          ct: contentType,
        })
        .map((f) => withShow(f));
      await fc.assert(
        fc.asyncProperty(form, async (f) => {
          const headers: Record<string, string> = { 'content-type': f.ct };
          if (f.cookie) headers.cookie = f.cookie;
          if (f.origin) headers.origin = f.origin;
          const res = await env.t.fetch(f.path, {
            method: 'POST',
            headers,
            body: f.body,
            signal: AbortSignal.timeout(20_000),
          });
          const text = await res.text();
          const fail = (why: string) =>
            new Error(`${why}: ${res.status} ${res.headers.get('location') ?? ''} ${text.slice(0, 200)}`);
          if (res.status >= 500) throw fail('server error');
          if ([302, 303].includes(res.status)) {
            const location = res.headers.get('location') ?? '';
            if (!location.startsWith('/') || location.startsWith('//') || location.includes('\\'))
              throw fail('redirect off this origin');
            return;
          }
          if (![200, 400, 401, 403, 404, 429].includes(res.status)) throw fail('unexpected status');
        }),
        fuzzParams(250, 'web:forms'),
      );
    },
  );

  it('leaves every invariant intact', async () => {
    expect(await integrityProblems(env.t.rt)).toEqual([]);
  });
});
