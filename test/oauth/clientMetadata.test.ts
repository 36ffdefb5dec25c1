import { describe, expect, it } from 'vitest';
import { createOrganization, createUser } from '../../src/domain/users.js';
import { approveClient } from '../../src/oauth/clientApprovals.js';
import { authorizeInBrowser, authorizeUrl, Browser, pkcePair, postForm, startOAuthServer } from './oauthHelpers.js';
import { clientDocument, INTERNAL_HOST, startMetadataServer } from './metadataServer.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import type { TestServer } from '../helpers/harness.js';

const PATH = '/oauth/client.json';

async function approve(t: TestServer, pattern: string, organizationId: string | null) {
  const s = t.rt.services;
  await s.ds.transaction((m) => approveClient(m, s.now(), { pattern, organizationId, createdById: null }));
}

const params = (t: TestServer, clientId: string, challenge: string, o: Record<string, string | undefined> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: 'http://127.0.0.1:41234/callback',
  scope: 'mcp:tools me:read',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  resource: `${t.baseUrl}/mcp`,
  state: 'st',
  ...o,
});

/** An /oauth/authorize answer that must be an HTML error page, never a redirect: its text. */
async function errorPage(t: TestServer, url: string, status = 400): Promise<string> {
  const res = await t.fetch(url);
  expect(res.status).toBe(status);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  return (await res.text())
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

describe('Client ID Metadata Documents', () => {
  it('advertises client_id_metadata_document_supported in the authorization server metadata', async () => {
    await using env = await startOAuthServer();
    const r = await env.t.fetch('/.well-known/oauth-authorization-server');
    expect(await r.json()).toMatchObject({ client_id_metadata_document_supported: true });
  });

  it('an unapproved client-id URL gets an error page that says who must approve what, and nothing is fetched', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const site = await startMetadataServer(t);
    try {
      const url = site.url(PATH);
      site.json(PATH, clientDocument(url));
      const page = await errorPage(t, authorizeUrl(params(t, url, pkcePair().challenge)));
      expect(page).toContain(`The client ${url} is not approved on this server`);
      expect(page).toContain('An owner or admin of your organization must approve it once');
      expect(page).toContain('Approved MCP clients');
      expect(page).toContain(`svc client allow --url ${url}`);
      expect(site.hits(PATH)).toBe(0);
    } finally {
      await site.close();
    }
  });

  it('an approved client signs in with its document: loopback redirect on another port, token, tool call; the approval can be withdrawn', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const site = await startMetadataServer(t);
    try {
      const url = site.url(PATH);
      site.json(PATH, clientDocument(url, { logo_uri: `${site.origin}/logo.png` }), { 'cache-control': 'max-age=600' });
      await approve(t, site.origin, w.orgId); // the origin approves every client-id URL under it
      const { verifier, challenge } = pkcePair();
      const b = new Browser(t.baseUrl);
      const { consent, callback } = await authorizeInBrowser(b, authorizeUrl(params(t, url, challenge)), w.member);
      expect(consent).toContain('<strong>Desk Agent</strong>');
      expect(consent).toContain(`published at <code>${url}</code>`);
      expect(consent).not.toContain('value="personal"'); // approved by the organization only: no personal context
      expect(callback.origin + callback.pathname).toBe('http://127.0.0.1:41234/callback');
      const code = callback.searchParams.get('code')!;
      const tok = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: url,
        redirect_uri: 'http://127.0.0.1:41234/callback',
      });
      expect(tok.status).toBe(200);
      expect(tok.body.scope).toBe('mcp:tools me:read');
      const me = await postMcp(t, toolCall('get_me'), { token: tok.body.access_token });
      expect(me.status).toBe(200);
      expect(me.body.result.structuredContent).toMatchObject({ id: w.member.id, organizationId: w.orgId });
      // the document was fetched once and served from the cache for the consent steps
      expect(site.hits(PATH)).toBe(1);

      // the grant shows under Apps with the document's name
      const apps = await (await b.get('/settings/apps')).text();
      expect(apps).toContain('Desk Agent');

      // withdrawn: refreshing stops, and a new authorization is refused again
      const s = t.rt.services;
      await s.ds.query('DELETE FROM "oauth_client_approvals"');
      const refresh = await postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tok.body.refresh_token,
        client_id: url,
      });
      expect(refresh.status).toBe(401);
      expect(refresh.body).toEqual({
        error: 'invalid_client',
        error_description: 'The client is no longer approved on this server',
      });
      expect(await errorPage(t, authorizeUrl(params(t, url, challenge)))).toContain('is not approved on this server');
    } finally {
      await site.close();
    }
  });

  it('offers only the organizations that approved the client; a user of none gets a page naming the approval', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const site = await startMetadataServer(t);
    try {
      const url = site.url(PATH);
      site.json(PATH, clientDocument(url));
      await approve(t, url, w.orgId);
      const s = t.rt.services;
      const outsider = await s.ds.transaction(async (m) => {
        const org = await createOrganization(m, s.now(), 'Other Org');
        await createUser(m, s.now(), {
          email: 'outsider@example.test',
          name: 'Out',
          password: 'pw-outsider-secret',
          organizationId: org.id,
          role: 'owner',
        });
        return { email: 'outsider@example.test', password: 'pw-outsider-secret', orgId: org.id };
      });
      const b = new Browser(t.baseUrl);
      await b.signIn(outsider.email, outsider.password);
      const a = await b.get(authorizeUrl(params(t, url, pkcePair().challenge)));
      expect(a.status).toBe(302);
      const page = await b.get(a.headers.get('location')!);
      expect(page.status).toBe(403);
      expect((await page.text()).replace(/&#39;/g, "'")).toContain(
        `The client ${url} is not approved for any organization you belong to`,
      );

      // a server-wide approval by the operator opens every context, Personal included
      await approve(t, url, null);
      const { consent } = await authorizeInBrowser(b, authorizeUrl(params(t, url, pkcePair().challenge)), outsider);
      expect(consent).toContain('value="personal"');
      expect(consent).toContain(`value="${outsider.orgId}"`);
    } finally {
      await site.close();
    }
  });

  it('honours Cache-Control max-age within bounds, and refetches after it', async () => {
    await using env = await startOAuthServer();
    const { t, w, clock } = env;
    const site = await startMetadataServer(t);
    try {
      const url = site.url(PATH);
      site.json(PATH, clientDocument(url), { 'cache-control': 'public, max-age=600' });
      await approve(t, url, w.orgId);
      const go = async () =>
        expect((await t.fetch(authorizeUrl(params(t, url, pkcePair().challenge)))).status).toBe(302);
      await go();
      await go();
      expect(site.hits(PATH)).toBe(1);
      clock.advance(601_000);
      await go();
      expect(site.hits(PATH)).toBe(2);
      // no-store: used for this request, never kept
      site.json(PATH, clientDocument(url), { 'cache-control': 'no-store' });
      clock.advance(601_000);
      await go();
      await go();
      expect(site.hits(PATH)).toBe(4);
    } finally {
      await site.close();
    }
  });

  it('a bad document or fetch gives a clear error page naming the problem, remembered 30 s and no longer', async () => {
    await using env = await startOAuthServer();
    const { t, clock } = env;
    const site = await startMetadataServer(t);
    try {
      await approve(t, site.origin, null);
      await approve(t, `https://${INTERNAL_HOST}`, null);
      const cases: [string, (url: string) => void, string][] = [
        ['/missing.json', () => undefined, 'could not be fetched: HTTP 404'],
        [
          '/big.json',
          (u) => site.json('/big.json', clientDocument(u, { client_uri: `https://x.example/${'a'.repeat(6000)}` })),
          'is larger than 5120 bytes',
        ],
        [
          '/redirect.json',
          () =>
            site.route(
              '/redirect.json',
              (_q, r) => void r.writeHead(302, { location: `${site.origin}/elsewhere.json` }).end(),
            ),
          'redirects (HTTP 302); redirects are not followed',
        ],
        ['/slow.json', () => site.route('/slow.json', () => undefined), 'did not arrive within'],
        [
          '/other-id.json',
          () => site.json('/other-id.json', clientDocument(`${site.origin}/someone-else.json`)),
          'its client_id is not exactly the URL it was fetched from',
        ],
        [
          '/no-name.json',
          (u) => site.json('/no-name.json', clientDocument(u, { client_name: undefined })),
          'client_name is missing',
        ],
        [
          '/secret.json',
          (u) => site.json('/secret.json', clientDocument(u, { token_endpoint_auth_method: 'client_secret_basic' })),
          'token_endpoint_auth_method must be "none"',
        ],
        [
          '/http-redirect.json',
          (u) => site.json('/http-redirect.json', clientDocument(u, { redirect_uris: ['http://app.example/cb'] })),
          'redirect URI http://app.example/cb must be https, or http on a loopback host',
        ],
        [
          '/bad-logo.json',
          (u) => site.json('/bad-logo.json', clientDocument(u, { logo_uri: 'javascript:alert(1)' })),
          'logo_uri must be an https URL',
        ],
        [
          '/not-json.json',
          () =>
            site.route(
              '/not-json.json',
              (_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end('{nope'),
            ),
          'is not valid JSON',
        ],
        [
          '/html.json',
          () =>
            site.route('/html.json', (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end('<html>')),
          'is not application/json (text/html)',
        ],
      ];
      for (const [p, serve, problem] of cases) {
        const url = site.url(p);
        serve(url);
        const page = await errorPage(t, authorizeUrl(params(t, url, pkcePair().challenge)));
        expect(page, p).toContain(`The client metadata document at ${url}`);
        expect(page, p).toContain(problem);
        // asked again within 30 s: the same page without a fetch; after them, fetched again
        const before = site.hits(p);
        expect(await errorPage(t, authorizeUrl(params(t, url, pkcePair().challenge))), p).toContain(problem);
        expect(site.hits(p), p).toBe(before);
        clock.advance(30_001);
        expect(await errorPage(t, authorizeUrl(params(t, url, pkcePair().challenge))), p).toContain(problem);
        expect(site.hits(p), p).toBe(before + 1);
      }
      // an internal address (SSRF): refused before any connection, the address not named
      const internal = await errorPage(
        t,
        authorizeUrl(params(t, `https://${INTERNAL_HOST}/client.json`, pkcePair().challenge)),
      );
      expect(internal).toContain(`Host ${INTERNAL_HOST} resolves to an internal or special address`);
      expect(internal).not.toContain('10.20.30.40');
      // unreachable: a port nobody listens on (the listener was closed)
      const gone = await startMetadataServer(t);
      const goneUrl = gone.url(PATH);
      await approve(t, gone.origin, null);
      await gone.close();
      expect(await errorPage(t, authorizeUrl(params(t, goneUrl, pkcePair().challenge)))).toContain('is unreachable');
      // a malformed client-id URL
      expect(await errorPage(t, authorizeUrl(params(t, `${site.origin}/`, pkcePair().challenge)))).toContain(
        'must have a path',
      );
      // a redirect_uri not in the document: a page, never a redirect
      site.json(PATH, clientDocument(site.url(PATH)));
      const wrong = await errorPage(
        t,
        authorizeUrl(params(t, site.url(PATH), pkcePair().challenge, { redirect_uri: 'https://evil.example/cb' })),
      );
      expect(wrong).toContain('redirect_uri does not match an address of the client metadata document');
    } finally {
      await site.close();
    }
  });
});
