import { createHash, randomBytes } from 'node:crypto';
import { createClient, type CreateClientOptions } from '../../src/oauth/clientRegistry.js';
import { createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';

/** A clock the test moves by hand (expiry of codes, tokens and sessions). */
export interface TestClock {
  now: number;
  advance(ms: number): void;
}

export async function startOAuthServer(env: Record<string, string> = {}) {
  const clock: TestClock = {
    now: Date.now(),
    advance(ms) {
      this.now += ms;
    },
  };
  const t = await startTestServer({ env, now: () => new Date(clock.now) });
  const w = await createWorld(t.rt);
  return { t, w, clock, [Symbol.asyncDispose]: () => t.close() };
}

export const CALLBACK = 'http://127.0.0.1:53682/callback';

/** Registers a client as `svc client create` does. */
export async function registerClient(t: TestServer, o: Partial<CreateClientOptions> = {}) {
  const s = t.rt.services;
  const { client, clientSecret } = await s.ds.transaction((m) =>
    createClient(m, s.now(), { name: 'Test App', redirectUris: [CALLBACK], type: 'public', ...o }),
  );
  return { clientId: client.id, clientSecret };
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The value of a hidden (or any) input named `name` in a page. */
export function field(html: string, name: string): string {
  const m = new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no field ${name} in page`);
  return unescape(m[1]);
}

/** A tiny browser: keeps cookies, never follows redirects by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const full = url.startsWith('http') ? url : this.baseUrl + url;
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(full, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (!value || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  get(url: string) {
    return this.request(url);
  }

  post(url: string, fields: Record<string, string>) {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Signs in through /login (reading its CSRF token); returns the response of the form post. */
  async signIn(email: string, password: string, next?: string): Promise<Response> {
    const page = await (await this.get(`/login${next ? `?next=${encodeURIComponent(next)}` : ''}`)).text();
    return this.post('/login', { csrf: field(page, 'csrf'), next: field(page, 'next'), email, password });
  }
}

export interface AuthorizeResult {
  /** The consent page's HTML. */
  consent: string;
  /** Where the consent answer redirected: the client's callback with code or error. */
  callback: URL;
}

/**
 * Drives an authorization request the way a browser does: /oauth/authorize → /oauth/consent → (sign in via
 * /login when needed) → consent form → redirect to the client.
 */
export async function authorizeInBrowser(
  b: Browser,
  authorizeUrl: string,
  o: { email: string; password: string; decision?: 'allow' | 'deny'; organization?: string },
): Promise<AuthorizeResult> {
  const a = await b.get(authorizeUrl);
  if (a.status !== 302) throw new Error(`authorize answered ${a.status}: ${await a.text()}`);
  let location = a.headers.get('location')!;
  if (!location.startsWith('/oauth/consent')) return { consent: '', callback: new URL(location) };
  let page = await b.get(location);
  if (page.status === 302) {
    const login = page.headers.get('location')!;
    const next = new URL(login, b.baseUrl).searchParams.get('next')!;
    const signed = await b.signIn(o.email, o.password, next);
    if (signed.status !== 303) throw new Error(`sign-in answered ${signed.status}`);
    location = signed.headers.get('location')!;
    page = await b.get(location);
  }
  const consent = await page.text();
  if (page.status !== 200) throw new Error(`consent answered ${page.status}: ${consent}`);
  const fields: Record<string, string> = {
    csrf: field(consent, 'csrf'),
    request: field(consent, 'request'),
    decision: o.decision ?? 'allow',
  };
  if (o.organization) fields.organization = o.organization;
  const answer = await b.post('/oauth/consent', fields);
  if (answer.status !== 303) throw new Error(`consent answer ${answer.status}: ${await answer.text()}`);
  return { consent, callback: new URL(answer.headers.get('location')!) };
}

/** Builds an /oauth/authorize URL from parameters (undefined ones left out). */
export function authorizeUrl(p: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (v !== undefined) q.append(k, v);
  return `/oauth/authorize?${q}`;
}

/** POSTs a form to the token (or revocation) endpoint and reads the JSON answer. */
export async function postForm(
  t: TestServer,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await t.fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** Runs a whole authorization for `client` and exchanges the code: the raw token response. */
export async function obtainTokens(
  t: TestServer,
  w: World,
  client: { clientId: string; clientSecret?: string | null },
  o: { resource?: string; scope?: string; user?: { email: string; password: string }; organization?: string } = {},
) {
  const { verifier, challenge } = pkcePair();
  const b = new Browser(t.baseUrl);
  const { callback } = await authorizeInBrowser(
    b,
    authorizeUrl({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: CALLBACK,
      scope: o.scope ?? 'me:read rooms:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: o.resource ?? `${t.baseUrl}/v1`,
      state: 'st',
    }),
    { ...(o.user ?? w.owner), organization: o.organization },
  );
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${callback}`);
  const fields: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CALLBACK,
    code_verifier: verifier,
    client_id: client.clientId,
  };
  if (client.clientSecret) fields.client_secret = client.clientSecret;
  const r = await postForm(t, '/oauth/token', fields);
  if (r.status !== 200) throw new Error(`token endpoint ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body as {
    access_token: string;
    refresh_token: string;
    scope: string;
    expires_in: number;
    token_type: string;
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
