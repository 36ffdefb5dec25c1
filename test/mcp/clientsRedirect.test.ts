import { describe, expect, it } from 'vitest';
import { redirectUriMatches } from '../../src/oauth/clientRegistry.js';
import {
  authorizeInBrowser,
  authorizeUrl,
  Browser,
  pkcePair,
  postForm,
  registerClient,
  startOAuthServer,
} from '../oauth/oauthHelpers.js';

/** What docs/mcp.md registers for the MCP Inspector: its web UI's callbacks. */
const INSPECTOR_WEB = ['http://localhost:6274/oauth/callback', 'http://localhost:6274/oauth/callback/debug'];
/** What the Inspector CLI presents (its default `--callback-url`). */
const INSPECTOR_CLI = 'http://127.0.0.1:6276/oauth/callback';

describe('loopback redirect URIs of MCP clients (RFC 8252 §7.3)', () => {
  it('a loopback IP literal on any port matches a loopback registration with the same path and query, whichever loopback host it names', () => {
    expect(redirectUriMatches(INSPECTOR_WEB, INSPECTOR_CLI)).toBe(true);
    expect(redirectUriMatches(INSPECTOR_WEB, 'http://127.0.0.1:6276/oauth/callback/debug')).toBe(true);
    expect(redirectUriMatches(INSPECTOR_WEB, 'http://[::1]:40000/oauth/callback')).toBe(true);
    // a client registered on one IP version that could bind only the other
    expect(redirectUriMatches(['http://127.0.0.1/cb'], 'http://[::1]:5000/cb')).toBe(true);
    expect(redirectUriMatches(['http://[::1]:80/cb'], 'http://127.0.0.1:5000/cb')).toBe(true);
    expect(redirectUriMatches(['http://127.0.0.1/cb?app=1'], 'http://127.0.0.1:5000/cb?app=1')).toBe(true);
  });

  it('refuses everything else: other hosts, https or non-http schemes, another path or query, userinfo, fragments, spellings that are not canonical', () => {
    const registered = [...INSPECTOR_WEB, 'http://127.0.0.1/cb?app=1', 'https://app.example/oauth/callback'];
    for (const bad of [
      // other hosts, also ones that look loopback
      'http://evil.example:6276/oauth/callback',
      'http://127.0.0.1.evil.example:6276/oauth/callback',
      'http://localhost.evil.example/oauth/callback',
      'http://app.example/oauth/callback',
      'http://10.0.0.1:6276/oauth/callback',
      'http://0.0.0.0:6276/oauth/callback',
      'http://127.0.0.2:6276/oauth/callback',
      'http://[::ffff:127.0.0.1]:6276/oauth/callback',
      // spellings the URL parser turns into 127.0.0.1: not what the client registered, and not canonical
      'http://0x7f000001:6276/oauth/callback',
      'http://2130706433:6276/oauth/callback',
      'http://127.1:6276/oauth/callback',
      'HTTP://127.0.0.1:6276/oauth/callback',
      // a presented localhost stays exact (a name can resolve elsewhere)
      'http://localhost:6276/oauth/callback',
      // https on loopback, or another scheme
      'https://127.0.0.1:6276/oauth/callback',
      'ws://127.0.0.1:6276/oauth/callback',
      // path and query exact
      'http://127.0.0.1:6276/oauth/callback/',
      'http://127.0.0.1:6276/oauth/callback?x=1',
      'http://127.0.0.1:6276/oauth/other',
      'http://127.0.0.1:6276/oauth/./callback',
      'http://127.0.0.1:6276/oauth/%63allback',
      'http://127.0.0.1:5000/cb',
      'http://127.0.0.1:5000/cb?app=2',
      // userinfo and fragments
      'http://user@127.0.0.1:6276/oauth/callback',
      'http://user:pw@127.0.0.1:6276/oauth/callback',
      'http://evil.example@127.0.0.1:6276/oauth/callback',
      'http://127.0.0.1:6276/oauth/callback#frag',
      'http://127.0.0.1:6276/oauth/callback#',
      // an https registration never matches on another port
      'https://app.example:8443/oauth/callback',
      'not a url',
    ]) {
      expect(redirectUriMatches(registered, bad), bad).toBe(false);
    }
    // an https registration gives no loopback URI a match
    expect(redirectUriMatches(['https://app.example/oauth/callback'], INSPECTOR_CLI)).toBe(false);
  });

  it("the Inspector CLI's callback finishes the flow against the guide's web-UI registration; the token request names it again", async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const app = await registerClient(t, { name: 'MCP Inspector', kind: 'agent', redirectUris: INSPECTOR_WEB });
    const { verifier, challenge } = pkcePair();
    const q = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: INSPECTOR_CLI,
      scope: 'mcp:tools me:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${t.baseUrl}/mcp`,
      state: 's1',
    };
    const { callback } = await authorizeInBrowser(new Browser(t.baseUrl), authorizeUrl(q), w.member);
    expect(callback.origin + callback.pathname).toBe(INSPECTOR_CLI);
    const token = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: app.clientId,
      redirect_uri: INSPECTOR_CLI,
    });
    expect(token.status).toBe(200);

    // the same client is still refused, with a page and no redirect, for any other address
    for (const redirect_uri of [
      'http://evil.example:6276/oauth/callback',
      'http://localhost:6276/oauth/callback',
      'http://user@127.0.0.1:6276/oauth/callback',
      'http://127.0.0.1:6276/oauth/callback#x',
      'http://127.0.0.1:6276/other',
    ]) {
      const res = await t.fetch(authorizeUrl({ ...q, redirect_uri }));
      expect(res.status, redirect_uri).toBe(400);
      expect(res.headers.get('location'), redirect_uri).toBeNull();
    }
  });
});
