import { describe, expect, it } from 'vitest';
import { OAuthCode } from '../../db/entities/index.js';
import { createOrganization, createUser } from '../../src/domain/users.js';
import { approveClient, withdrawApproval } from '../../src/oauth/clientApprovals.js';
import { configureClientMetadataFetch } from '../../src/oauth/clientMetadataDocument.js';
import { metadataClientRowId } from '../../src/oauth/metadataClients.js';
import type { TestServer } from '../helpers/harness.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  pkcePair,
  postForm,
  startOAuthServer,
} from '../oauth/oauthHelpers.js';
import { clientDocument, startMetadataServer } from '../oauth/metadataServer.js';

// Penetration test 3 (SECURITY.md "Penetration test 3: OAuth clients"): a client ID metadata document client
// is known by its URL alone, its approval is checked for the grant's own context at every step, and fetching
// its document is bounded.

type Env = Awaited<ReturnType<typeof startOAuthServer>>;
type Site = Awaited<ReturnType<typeof startMetadataServer>>;
interface Person {
  email: string;
  password: string;
}

const PATH = '/oauth/client.json';
const REDIRECT = 'http://127.0.0.1:41234/callback';

const params = (t: TestServer, clientId: string, challenge = pkcePair().challenge) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  scope: 'mcp:tools me:read',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  resource: `${t.baseUrl}/mcp`,
  state: 'st',
});

async function approve(t: TestServer, pattern: string, organizationId: string | null) {
  const s = t.rt.services;
  await s.ds.transaction((m) => approveClient(m, s.now(), { pattern, organizationId, createdById: null }));
}

/** What `svc client disallow --url … [--org …]` does. */
async function disallow(t: TestServer, pattern: string, organizationId: string | null) {
  const s = t.rt.services;
  expect(await s.ds.transaction((m) => withdrawApproval(m, { pattern, organizationId }))).toBe(true);
}

/** The owner of a second organization. */
async function otherOrganization(t: TestServer): Promise<Person & { orgId: string }> {
  const s = t.rt.services;
  return s.ds.transaction(async (m) => {
    const org = await createOrganization(m, s.now(), 'Other Org');
    const email = `outsider-${Math.random().toString(36).slice(2, 8)}@example.test`;
    await createUser(m, s.now(), {
      email,
      name: 'Out',
      password: 'pw-outsider-secret',
      organizationId: org.id,
      role: 'owner',
    });
    return { email, password: 'pw-outsider-secret', orgId: org.id };
  });
}

/** An authorization code for `who` acting in `organization` ('personal' for Personal). */
async function codeFor(env: Env, url: string, who: Person, organization: string) {
  const { verifier, challenge } = pkcePair();
  const { callback } = await authorizeInBrowser(
    new Browser(env.t.baseUrl),
    authorizeUrl(params(env.t, url, challenge)),
    { ...who, organization },
  );
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${callback}`);
  return { code, verifier };
}

const exchange = (t: TestServer, clientId: string, c: { code: string; verifier: string }) =>
  postForm(t, '/oauth/token', {
    grant_type: 'authorization_code',
    code: c.code,
    code_verifier: c.verifier,
    client_id: clientId,
    redirect_uri: REDIRECT,
  });

async function tokensFor(env: Env, url: string, who: Person, organization: string): Promise<string> {
  const r = await exchange(env.t, url, await codeFor(env, url, who, organization));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.refresh_token as string;
}

/** Refreshes; on success the next refresh token replaces the one in `holder`. */
async function refresh(t: TestServer, clientId: string, holder: { token: string }) {
  const r = await postForm(t, '/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: holder.token,
    client_id: clientId,
  });
  if (r.status === 200) holder.token = r.body.refresh_token;
  return r;
}

const pageText = async (res: Response) =>
  (await res.text())
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

async function withSite(env: Env, f: (site: Site, url: string) => Promise<void>) {
  const site = await startMetadataServer(env.t);
  try {
    const url = site.url(PATH);
    site.json(PATH, clientDocument(url), { 'cache-control': 'max-age=600' });
    await f(site, url);
  } finally {
    await site.close();
  }
}

/** Answers held back until released; once released, every later request is answered at once. */
function holder() {
  const held: (() => void)[] = [];
  let open = false;
  return {
    get count() {
      return held.length;
    },
    hold(answer: () => void) {
      if (open) answer();
      else held.push(answer);
    },
    release() {
      open = true;
      for (const answer of held.splice(0)) answer();
    },
    /** Holds again from now on. */
    close() {
      open = false;
    },
  };
}

/** Resolves once `check` holds, looking again every few milliseconds (the test's own timeout bounds it). */
async function until(check: () => boolean) {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('security: OAuth clients (penetration test 3)', () => {
  it('the stored row id as client_id walks around the approval: refused at authorize, code exchange and refresh, before and after disallow', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    await withSite(env, async (_site, url) => {
      await approve(t, url, w.orgId);
      const rowId = metadataClientRowId(url);
      // a member of the approving organization authorizes once: the client's row exists from now on
      const grant = { token: await tokensFor(env, url, w.member, w.orgId) };

      // a user of another organization: refused with the URL (nothing offered), and refused with the row id too,
      // already at /oauth/authorize (an error page, never a redirect, never a consent screen)
      const outsider = await otherOrganization(t);
      const b = new Browser(t.baseUrl);
      await b.signIn(outsider.email, outsider.password);
      const viaUrl = await b.get(authorizeUrl(params(t, url)));
      expect(viaUrl.status).toBe(302);
      expect((await b.get(viaUrl.headers.get('location')!)).status).toBe(403);
      for (const spelling of [rowId, rowId.toUpperCase(), ` ${rowId}`]) {
        const viaRow = await b.get(authorizeUrl(params(t, spelling)));
        expect(viaRow.status, spelling).toBe(400);
        expect(viaRow.headers.get('location'), spelling).toBeNull();
        const text = await pageText(viaRow);
        expect(text, spelling).not.toContain('Act as');
        if (spelling === rowId) expect(text).toContain('is identified by its client-id URL');
      }

      // the token endpoint: the row id authenticates nothing (a code of the URL client is not consumed by it)
      const c = await codeFor(env, url, w.member, w.orgId);
      const byRow = await exchange(t, rowId, c);
      expect(byRow.status).toBe(401);
      expect(byRow.body.error).toBe('invalid_client');
      const rowRefresh = await refresh(t, rowId, grant);
      expect(rowRefresh.status).toBe(401);
      expect(rowRefresh.body.error).toBe('invalid_client');
      expect((await exchange(t, url, c)).status).toBe(200);
      expect((await refresh(t, url, grant)).status).toBe(200);

      // svc client disallow: no approval left anywhere; neither spelling refreshes or authorizes
      await disallow(t, url, w.orgId);
      for (const clientId of [rowId, url]) {
        const r = await refresh(t, clientId, grant);
        expect(r.status, clientId).toBe(401);
        expect(r.body.error, clientId).toBe('invalid_client');
        const a = await b.get(authorizeUrl(params(t, clientId)));
        expect(a.status, clientId).toBe(400);
        expect(a.headers.get('location'), clientId).toBeNull();
      }
    });
  });

  it("withdrawing one organization's approval stops that organization's grants at refresh and code exchange, whatever another approves; Personal needs the server-wide approval", async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    await withSite(env, async (_site, url) => {
      const other = await otherOrganization(t);
      await approve(t, url, w.orgId);
      await approve(t, url, other.orgId);
      await approve(t, url, null);
      const inA = { token: await tokensFor(env, url, w.member, w.orgId) };
      const inB = { token: await tokensFor(env, url, other, other.orgId) };
      const personal = { token: await tokensFor(env, url, other, 'personal') };
      const pendingInA = await codeFor(env, url, w.member, w.orgId);

      // the server-wide approval withdrawn: the personal grant stops; the organizations' grants go on
      await disallow(t, url, null);
      const p = await refresh(t, url, personal);
      expect(p.status).toBe(400);
      expect(p.body.error).toBe('invalid_grant');
      expect(p.body.error_description).toMatch(/not approved/);
      expect((await refresh(t, url, inA)).status).toBe(200);
      expect((await refresh(t, url, inB)).status).toBe(200);

      // A withdraws while B still approves the same URL: A's grant and A's unexchanged code stop, B's go on
      await disallow(t, url, w.orgId);
      const a = await refresh(t, url, inA);
      expect(a.status).toBe(400);
      expect(a.body.error).toBe('invalid_grant');
      expect(a.body.error_description).toMatch(/not approved/);
      const code = await exchange(t, url, pendingInA);
      expect(code.status).toBe(400);
      expect(code.body.error).toBe('invalid_grant');
      expect((await refresh(t, url, inB)).status).toBe(200);

      // approved again by A: its grant refreshes again (the grant was refused, not revoked)
      await approve(t, url, w.orgId);
      expect((await refresh(t, url, inA)).status).toBe(200);
    });
  });

  it('a consent form edited to pick a context the approvals do not offer (Personal, another organization) gets a page, no code', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    await withSite(env, async (_site, url) => {
      const other = await otherOrganization(t);
      await approve(t, url, w.orgId);
      for (const organization of ['personal', other.orgId]) {
        await expect(
          authorizeInBrowser(new Browser(t.baseUrl), authorizeUrl(params(t, url)), { ...w.owner, organization }),
          organization,
        ).rejects.toThrow(/consent answer 400: .*Choose one of the organizations offered/s);
      }
      expect(await t.rt.services.ds.manager.count(OAuthCode)).toBe(0);
    });
  });

  it('unauthenticated authorize requests for many paths under an approved origin: at most 2 fetches per origin at once, the rest refused without fetching', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const site = await startMetadataServer(t);
    // the documents never arrive until released: no slot frees by itself while the requests arrive
    configureClientMetadataFetch(t.rt.services, { totalTimeoutMs: 120_000 });
    const held = holder();
    try {
      await approve(t, site.origin, null);
      const paths = Array.from({ length: 30 }, (_, i) => `/c${i}.json`);
      for (const p of paths) site.route(p, (_req, res) => held.hold(() => res.writeHead(404).end()));
      let answered = 0;
      const pages = paths.map(async (p) => {
        const res = await t.fetch(authorizeUrl(params(t, site.url(p))));
        const text = await pageText(res);
        answered++;
        return { status: res.status, location: res.headers.get('location'), text };
      });
      await until(() => held.count > 2 || (answered === 28 && held.count === 2));
      expect(paths.reduce((n, p) => n + site.hits(p), 0)).toBe(2);
      held.release();
      const results = await Promise.all(pages);
      expect(results.every((r) => r.status === 400 && r.location === null)).toBe(true);
      const busy = results.filter((r) => r.text.includes('too many client metadata documents are being fetched'));
      expect(busy).toHaveLength(28);
      expect(busy[0].text).toContain('try again in a few seconds');
      expect(paths.reduce((n, p) => n + site.hits(p), 0)).toBe(2);
    } finally {
      held.release();
      await site.close();
    }
  });

  it('many origins at once: at most 8 fetches in all; 30 requests for one URL share one fetch', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const sites: Site[] = [];
    const held = holder();
    try {
      for (let i = 0; i < 5; i++) sites.push(await startMetadataServer(t));
      configureClientMetadataFetch(t.rt.services, { totalTimeoutMs: 120_000 });
      const urls: string[] = [];
      for (const site of sites) {
        await approve(t, site.origin, null);
        for (let i = 0; i < 4; i++) {
          const url = site.url(`/c${i}.json`);
          site.route(`/c${i}.json`, (_req, res) =>
            held.hold(() =>
              res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(clientDocument(url))),
            ),
          );
          urls.push(url);
        }
      }
      let answered = 0;
      const pages = urls.map(async (u) => {
        const res = await t.fetch(authorizeUrl(params(t, u)));
        await res.arrayBuffer();
        answered++;
        return res.status;
      });
      await until(() => held.count > 8 || (answered === 12 && held.count === 8));
      const fetched = () =>
        sites.reduce((n, site) => n + [0, 1, 2, 3].reduce((k, i) => k + site.hits(`/c${i}.json`), 0), 0);
      expect(fetched()).toBe(8);
      held.release();
      const statuses = await Promise.all(pages);
      expect(statuses.filter((s) => s === 302)).toHaveLength(8);
      expect(statuses.filter((s) => s === 400)).toHaveLength(12);

      // one URL asked 30 times at once: one fetch, every request answered from it
      const site = sites[0];
      const one = site.url('/shared.json');
      held.close();
      site.route('/shared.json', (_req, res) =>
        held.hold(() =>
          res
            .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
            .end(JSON.stringify(clientDocument(one))),
        ),
      );
      const same = Promise.all(
        Array.from({ length: 30 }, async () => (await t.fetch(authorizeUrl(params(t, one)))).status),
      );
      // (requests arriving after the answer read it from the cache; those before it wait on the one fetch)
      await until(() => held.count >= 1);
      await new Promise((r) => setTimeout(r, 200));
      expect(held.count).toBe(1);
      held.release();
      expect(await same).toEqual(Array(30).fill(302));
      expect(site.hits('/shared.json')).toBe(1);
    } finally {
      held.release();
      for (const site of sites) await site.close();
    }
  });

  it('a failing document is fetched once per 30 s however often it is asked for, then again', async () => {
    await using env = await startOAuthServer();
    const { t, clock } = env;
    const site = await startMetadataServer(t);
    try {
      await approve(t, site.origin, null);
      const url = site.url('/broken.json');
      site.route('/broken.json', (_req, res) => void res.writeHead(500).end());
      for (let i = 0; i < 10; i++) {
        const res = await t.fetch(authorizeUrl(params(t, url)));
        expect(res.status).toBe(400);
        expect(await pageText(res)).toContain(`The client metadata document at ${url} could not be fetched: HTTP 500`);
      }
      expect(site.hits('/broken.json')).toBe(1);
      clock.advance(31_000);
      site.json('/broken.json', clientDocument(url));
      expect((await t.fetch(authorizeUrl(params(t, url)))).status).toBe(302);
      expect(site.hits('/broken.json')).toBe(2);
    } finally {
      await site.close();
    }
  });
});
