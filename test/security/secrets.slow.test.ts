import { describe, expect, it } from 'vitest';
import { sql } from '../../db/sql.js';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { createConnector } from '../../src/agents/connectors.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { createWorld, issueKey } from '../helpers/harness.js';
import { authorizeInBrowser, authorizeUrl, Browser, CALLBACK, pkcePair } from '../oauth/oauthHelpers.js';
import { serverDatabase } from '../robustness/serverProcess.js';
import { startReceiver } from '../webhooks/helpers.js';
import { waitFor } from '../webhooks/processes.js';

// Secret exposure: the real server, logging at `trace`, is driven through
// REST, MCP, OAuth, sign-in and webhook delivery, successes and failures alike. No API key, OAuth token, code
// or client secret, webhook secret, custom header value, password or session cookie appears in any /v1 or
// /mcp response, in any log line, or anywhere in the database (audit rows included) in clear.

describe('security: secret exposure', () => {
  it(
    'no secret in any /v1 or /mcp response, log line, audit row or database column',
    { timeout: 120_000 },
    async () => {
      await using rx = await startReceiver();
      // an agent connector that accepts its invocation, so the run's delegated token stays live
      await using cx = await startReceiver([{ status: 202 }]);
      const db = await serverDatabase({ LOG_LEVEL: 'trace' });
      try {
        const setup = await db.open();
        const w = await createWorld(setup);
        const s = setup.services;
        const revoked = await issueKey(setup, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
        await s.ds.transaction((m) => revokeApiKey(m, s.now(), revoked.id));
        const { client, clientSecret } = await s.ds.transaction((m) =>
          createClient(m, s.now(), { name: 'Notes', redirectUris: [CALLBACK], type: 'confidential' }),
        );
        const headerSecret = 'Bearer receiver-credential-7f3a9c';
        const { webhook, secret: webhookSecret } = await createWebhook(s, {
          roomId: w.roomId,
          url: rx.url,
          createdById: w.owner.id,
          headers: [['Authorization', headerSecret]],
        });
        const { connector, secret: connectorSecret } = await createConnector(s, {
          organizationId: w.orgId,
          name: 'Agent',
          url: cx.url,
          scopes: ['mcp:tools', 'messages:write'],
        });
        const invoker = await issueKey(setup, {
          userId: w.owner.id,
          organizationId: w.orgId,
          scopes: ['agent:invoke', 'mcp:tools', 'messages:write'],
        });
        await setup.close();

        const server = await db.start({ SVC_WORKER: 'on' });
        const base = server.base;
        const seen: string[] = [];
        const fetchApi = async (path: string, init: RequestInit = {}) => {
          const res = await fetch(base + path, init);
          const text = await res.text();
          seen.push(`${path} ${res.status} ${JSON.stringify([...res.headers])} ${text}`);
          return { status: res.status, text };
        };
        const bearer = (token: string, extra: Record<string, string> = {}) => ({
          headers: { authorization: `Bearer ${token}`, ...extra },
        });
        const json = (token: string, method: string, body: unknown) => ({
          method,
          body: JSON.stringify(body),
          ...bearer(token, { 'content-type': 'application/json' }),
        });
        const mcp = (token: string, name: string, args: object) =>
          fetchApi('/mcp', {
            method: 'POST',
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
            ...bearer(token, {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-11-25',
            }),
          });

        // OAuth: sign in (a wrong password first), consent, code exchange with the client secret, refresh, revoke
        const browser = new Browser(base);
        await browser.signIn(w.owner.email, `${w.owner.password}-wrong`);
        const { verifier, challenge } = pkcePair();
        const { callback } = await authorizeInBrowser(
          browser,
          authorizeUrl({
            response_type: 'code',
            client_id: client.id,
            redirect_uri: CALLBACK,
            scope: 'me:read rooms:read webhooks:read mcp:tools',
            code_challenge: challenge,
            code_challenge_method: 'S256',
            resource: `${base}/v1`,
            state: 's',
          }),
          w.owner,
        );
        const code = callback.searchParams.get('code')!;
        const form = (fields: Record<string, string>) =>
          fetch(`${base}/oauth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          }).then((r) => r.json() as Promise<any>);
        await form({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: CALLBACK,
          client_id: client.id,
          client_secret: 'svc_cs_wrong',
        });
        const tokens = await form({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: CALLBACK,
          client_id: client.id,
          client_secret: clientSecret!,
        });
        expect(tokens.access_token).toMatch(/^svc_at_/);
        const refreshed = await form({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.id,
          client_secret: clientSecret!,
        });

        // REST and MCP, successes and refusals
        await fetchApi('/v1/me', bearer(w.key));
        await fetchApi('/v1/me', bearer(refreshed.access_token));
        await fetchApi('/v1/me', bearer(tokens.access_token));
        await fetchApi('/v1/me', bearer(revoked.token));
        await fetchApi('/v1/me', bearer(`${w.key.slice(0, -4)}AAAA`));
        await fetchApi('/v1/me', { headers: { cookie: `svc_session=${browser.cookies.get('svc_session')}` } });
        await fetchApi(`/v1/rooms/${w.roomId}/messages`, json(w.key, 'POST', { body: 'hello' }));
        // a secret sent where it does not belong is refused without being echoed back
        await fetchApi(
          `/v1/rooms/${w.roomId}/messages`,
          json(w.key, 'POST', { body: 'x', token: w.key, password: w.owner.password }),
        );
        await fetchApi(`/v1/rooms/${w.roomId}/messages`, json(w.key, 'POST', { body: { nested: clientSecret } }));
        await fetchApi(`/v1/rooms/${w.roomId}/webhooks`, bearer(w.key));
        await fetchApi(`/v1/rooms/${w.roomId}/webhooks`, bearer(refreshed.access_token));
        await fetchApi('/v1/events', bearer(w.key));
        await mcp(w.key, 'get_me', {});
        await mcp(w.key, 'list_webhooks', { roomId: w.roomId });
        await mcp(refreshed.access_token, 'get_me', {});
        await mcp(revoked.token, 'get_me', {});
        await waitFor(() => rx.requests.length >= 1, 'a delivery');
        const deliveries = await fetchApi(`/v1/rooms/${w.roomId}/webhooks/${webhook.id}/deliveries`, bearer(w.key));
        const first = JSON.parse(deliveries.text).data[0].id;
        await fetchApi(`/v1/rooms/${w.roomId}/webhooks/${webhook.id}/deliveries/${first}/redeliver`, {
          method: 'POST',
          ...bearer(w.key),
        });
        await mcp(w.key, 'list_webhook_deliveries', { roomId: w.roomId, webhookId: webhook.id });
        await fetch(`${base}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            token: refreshed.refresh_token,
            client_id: client.id,
            client_secret: clientSecret!,
          }).toString(),
        });
        // the agent route: a run, its delegated token at work (and refused), the run's views, its cancel
        const run = JSON.parse(
          (
            await fetchApi(
              `/v1/rooms/${w.roomId}/agent-runs`,
              json(invoker.token, 'POST', { connectorId: connector.id, input: { text: 'hi' } }),
            )
          ).text,
        );
        await waitFor(() => cx.requests.length >= 1, "the connector's invocation");
        const delegated = JSON.parse(cx.requests[0].body.toString('utf8')).delegation.accessToken as string;
        await mcp(delegated, 'create_message', { roomId: w.roomId, body: 'from the agent' });
        await mcp(delegated, 'list_webhooks', { roomId: w.roomId });
        await fetchApi('/v1/me', bearer(delegated));
        await fetchApi(`/v1/rooms/${w.roomId}/agent-runs/${run.id}`, bearer(invoker.token));
        await mcp(invoker.token, 'list_agent_runs', { roomId: w.roomId });
        await fetchApi(`/v1/rooms/${w.roomId}/agent-runs/${run.id}/cancel`, {
          method: 'POST',
          ...bearer(invoker.token),
        });
        await mcp(delegated, 'get_me', {});
        expect(await server.stop('SIGTERM')).toBe(0);

        const secrets: Record<string, string> = {
          'API key': w.key,
          'revoked API key': revoked.token,
          'access token': tokens.access_token,
          'refresh token': tokens.refresh_token,
          'rotated access token': refreshed.access_token,
          'rotated refresh token': refreshed.refresh_token,
          'authorization code': code,
          'client secret': clientSecret!,
          'webhook secret': webhookSecret,
          'custom header value': headerSecret.slice(7),
          password: w.owner.password,
          'session cookie': browser.cookies.get('svc_session')!,
          'agent connector secret': connectorSecret,
          'delegated token': delegated,
          'invoking API key': invoker.token,
        };
        const rt = await db.open();
        let dump = '';
        try {
          const tables = [
            'users',
            'api_keys',
            'oauth_clients',
            'oauth_codes',
            'oauth_tokens',
            'oauth_grants',
            'webhooks',
            'webhook_deliveries',
            'audit_log',
            'idempotency_keys',
            'messages',
            'events',
            'settings',
            'rate_limits',
            'web_sessions',
          ];
          for (const table of tables) dump += JSON.stringify((await sql(rt.ds, `SELECT * FROM "${table}"`)).rows);
          expect((await sql(rt.ds, 'SELECT COUNT(*) AS "n" FROM "audit_log"')).rows[0].n).not.toBe(0);
        } finally {
          await rt.close();
        }
        const logs = server.output();
        expect(logs).toContain('webhook attempt');
        const responses = seen.join('\n');
        for (const [name, value] of Object.entries(secrets)) {
          expect(value.length, name).toBeGreaterThan(8);
          expect(responses.includes(value), `${name} in a /v1 or /mcp response`).toBe(false);
          expect(logs.includes(value), `${name} in a log line`).toBe(false);
          expect(dump.includes(value), `${name} in the database`).toBe(false);
        }
        // what receivers got is signed, never the secret itself
        expect(rx.requests.every((q) => !JSON.stringify(q.headers).includes(webhookSecret))).toBe(true);
        expect(rx.requests[0].headers.authorization).toBe(headerSecret);
      } finally {
        await db.remove();
      }
    },
  );
});
