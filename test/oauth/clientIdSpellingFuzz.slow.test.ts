import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createUser } from '../../src/domain/users.js';
import { approveClient } from '../../src/oauth/clientApprovals.js';
import { metadataClientRowId } from '../../src/oauth/metadataClients.js';
import { fuzzParams } from '../robustness/fuzzWorld.js';
import { authorizeInBrowser, authorizeUrl, Browser, pkcePair, postForm, startOAuthServer } from './oauthHelpers.js';
import { clientDocument, startMetadataServer } from './metadataServer.js';

// Penetration test 3 (SECURITY.md): a client ID metadata document client has one identity, its client-id URL in
// normal form. Every other spelling of it (its stored row id, case changes, a trailing slash, percent-encoding, a
// fragment, the port respelled, dot segments, user info, …) is refused at /oauth/authorize, at the code exchange
// and at refresh, or (were one ever accepted) maps to the very same client and approval decision: never a consent
// screen for an organization that did not approve the URL, never a code or a refresh token consumed by it.

type Env = Awaited<ReturnType<typeof startOAuthServer>>;
type Site = Awaited<ReturnType<typeof startMetadataServer>>;

const PATH = '/oauth/client.json';
const REDIRECT = 'http://127.0.0.1:41234/callback';

/** A string with the character at `i` replaced by `by`. */
const splice = (s: string, i: number, by: string) => s.slice(0, i) + by + s.slice(i + 1);

/** Respellings of a client-id URL `https://host:port/oauth/client.json`, each one edit. */
function mutation(port: string): fc.Arbitrary<(u: string) => string> {
  const replace = (from: string | RegExp, to: string) => (u: string) => u.replace(from, to);
  return fc.oneof(
    // the case of one letter anywhere
    fc.nat().map((n) => (u: string) => {
      const letters = [...u].flatMap((c, i) => (/[a-z]/i.test(c) ? [i] : []));
      const i = letters[n % letters.length];
      const c = u[i];
      return splice(u, i, c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
    }),
    // one character percent-encoded (upper or lower hex)
    fc.tuple(fc.nat(), fc.boolean()).map(([n, lower]) => (u: string) => {
      const i = n % u.length;
      const hex = u.charCodeAt(i).toString(16).padStart(2, '0');
      return splice(u, i, `%${lower ? hex : hex.toUpperCase()}`);
    }),
    // something appended
    fc
      .constantFrom(
        '/',
        '#',
        '#frag',
        '?',
        '?x=1',
        '%20',
        ' ',
        '\t',
        '.',
        '/.',
        '/..',
        '/./',
        ';',
        '%00',
        '\n',
        '%2F',
        '\\',
      )
      .map((x) => (u: string) => u + x),
    // something put before
    fc.constantFrom(' ', '\t', '\u200b', '\ufeff').map((x) => (u: string) => x + u),
    // the scheme
    fc
      .constantFrom(
        'HTTPS://',
        'Https://',
        'https:',
        'https:/',
        'https:///',
        'https:\\\\',
        'http://',
        'https://user@',
        'https://:@',
        'https://user:pw@',
      )
      .map((x) => replace(/^[^:]*:\/\//, x)),
    // the host and port
    fc
      .constantFrom(
        `agent.example.test.:${port}`,
        `AGENT.EXAMPLE.TEST:${port}`,
        `agent.example.test:0${port}`,
        `agent.example.test:${port}:`,
        'agent.example.test:443',
        'agent.example.test',
        `agent%2Eexample.test:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        `agent.example.test:+${port}`,
      )
      .map((x) => replace(`agent.example.test:${port}`, x)),
    // the path
    fc
      .constantFrom(
        '/oauth/./client.json',
        '/oauth/x/../client.json',
        '/oauth//client.json',
        '//oauth/client.json',
        '/OAUTH/client.json',
        '/oauth/client.json/',
        '/oauth%2Fclient.json',
        '/oauth/client%2Ejson',
        '/%6Fauth/client.json',
        '/oauth/%2e/client.json',
        '/oauth/client.json%23',
        '/oauth\\client.json',
      )
      .map((x) => replace(PATH, x)),
  );
}

describe('client-id spellings (penetration test 3)', () => {
  let env: Env;
  let site: Site;
  let url: string;
  let rowId: string;
  /** A code of the URL client for org A, never exchanged until the end. */
  let pending: { code: string; verifier: string };
  /** A refresh token of the URL client's grant in org A, never rotated until the end. */
  let refreshToken: string;
  let outsider: { email: string; password: string; orgId: string };

  const authorizeParams = (clientId: string) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'mcp:tools me:read',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    resource: `${env.t.baseUrl}/mcp`,
    state: 'st',
  });

  async function codeForA() {
    const { verifier, challenge } = pkcePair();
    const { callback } = await authorizeInBrowser(
      new Browser(env.t.baseUrl),
      authorizeUrl({ ...authorizeParams(url), code_challenge: challenge }),
      { ...env.w.member, organization: env.w.orgId },
    );
    return { code: callback.searchParams.get('code')!, verifier };
  }

  const exchange = (clientId: string, c: { code: string; verifier: string }, basic: boolean) =>
    postForm(
      env.t,
      '/oauth/token',
      {
        grant_type: 'authorization_code',
        code: c.code,
        code_verifier: c.verifier,
        redirect_uri: REDIRECT,
        ...(basic ? {} : { client_id: clientId }),
      },
      basic ? basicHeader(clientId) : {},
    );
  const refresh = (clientId: string, token: string, basic: boolean) =>
    postForm(
      env.t,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: token, ...(basic ? {} : { client_id: clientId }) },
      basic ? basicHeader(clientId) : {},
    );
  /** A public client's HTTP Basic credentials: the id form-encoded (RFC 6749 §2.3.1), an empty secret. */
  const basicHeader = (clientId: string) => ({
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:`).toString('base64')}`,
  });

  beforeAll(async () => {
    env = await startOAuthServer();
    site = await startMetadataServer(env.t);
    url = site.url(PATH);
    rowId = metadataClientRowId(url);
    site.json(PATH, clientDocument(url), { 'cache-control': 'max-age=3600' });
    const s = env.t.rt.services;
    // the URL exactly, approved by organization A only; B approves nothing
    await s.ds.transaction((m) =>
      approveClient(m, s.now(), { pattern: url, organizationId: env.w.orgId, createdById: null }),
    );
    outsider = await s.ds.transaction(async (m) => {
      const org = await createOrganization(m, s.now(), 'Other Org');
      await createUser(m, s.now(), {
        email: 'spelling-outsider@example.test',
        name: 'Out',
        password: 'pw-outsider-secret',
        organizationId: org.id,
        role: 'owner',
      });
      return { email: 'spelling-outsider@example.test', password: 'pw-outsider-secret', orgId: org.id };
    });
    const first = await exchange(url, await codeForA(), false);
    expect(first.status).toBe(200);
    refreshToken = first.body.refresh_token;
    pending = await codeForA();
  });
  afterAll(async () => {
    await site?.close();
    await env?.t.close();
  });

  it(
    'every other spelling of the URL client is refused at authorize, code exchange and refresh, or is that very client',
    { timeout: 300_000 },
    async () => {
      const port = new URL(url).port;
      const spelling = fc
        .oneof(
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              rowId,
              rowId.toUpperCase(),
              ` ${rowId}`,
              `${rowId} `,
              rowId.slice(0, -1),
              `${rowId}#`,
              `https://x/${rowId}`,
              metadataClientRowId(`${url}/`),
            ),
          },
          {
            weight: 6,
            arbitrary: fc
              .array(mutation(port), { minLength: 1, maxLength: 3 })
              .map((ms) => ms.reduce((u, m) => m(u), url)),
          },
        )
        .filter((x) => x !== url);
      const outsiderBrowser = new Browser(env.t.baseUrl);
      await outsiderBrowser.signIn(outsider.email, outsider.password);

      await fc.assert(
        fc.asyncProperty(spelling, fc.boolean(), async (clientId, basic) => {
          // authorize: an error page (never a redirect), or the consent step of this very client, which offers
          // the outsider nothing (B never approved the URL)
          const a = await outsiderBrowser.get(authorizeUrl(authorizeParams(clientId)));
          if (a.status === 302) {
            const location = a.headers.get('location')!;
            expect(location.startsWith('/oauth/consent?'), location).toBe(true);
            const signed = new URL(location, env.t.baseUrl).searchParams.get('request')!;
            const req = JSON.parse(Buffer.from(signed.split('.')[1], 'base64url').toString()).req;
            expect(req).toMatchObject({ clientId: rowId, clientUrl: url });
            expect((await outsiderBrowser.get(location)).status).toBe(403);
          } else {
            expect(a.status).toBe(400);
            expect(a.headers.get('location')).toBeNull();
            expect(await a.text()).not.toContain('name="decision"');
          }

          // the code exchange and a refresh: refused with an RFC 6749 error; neither the code nor the refresh
          // token is used up by the attempt (checked at the end)
          for (const r of [await exchange(clientId, pending, basic), await refresh(clientId, refreshToken, basic)]) {
            expect([400, 401], JSON.stringify(r.body)).toContain(r.status);
            expect(['invalid_client', 'invalid_request']).toContain(r.body.error);
          }
        }),
        fuzzParams(150, 'oauth:client-id spellings'),
      );

      // the URL itself still works, with the very code and refresh token every spelling was refused with
      expect((await exchange(url, pending, false)).status).toBe(200);
      expect((await refresh(url, refreshToken, true)).status).toBe(200);
    },
  );
});
