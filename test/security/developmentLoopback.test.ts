import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { allowlistOf, checkOutboundUrl, type Resolver, UrlRefusedError } from '../../src/outbound/ssrfGuard.js';
import { createConnector } from '../../src/agents/connectors.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';
import { startReceiver } from '../webhooks/helpers.js';

// The development setup `npm start` runs with no settings lets the server call receivers and connectors on this
// machine; any production-like setting keeps the SSRF guard whole (docs/configuration.md#development-setup).

const resolver: Resolver = async (host) =>
  host === 'localhost'
    ? [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]
    : host === 'intranet.example'
      ? [{ address: '10.1.2.3', family: 4 }]
      : [];

/** What `npm start` runs with when nothing is set: NODE_ENV unset, SQLite, HOST and BASE_URL defaults. */
const DEV: NodeJS.ProcessEnv = { DATABASE_URL: 'sqlite:/tmp/svc-dev-loopback/svc.sqlite' };
const SECRET = 'x'.repeat(32);

const check = (env: NodeJS.ProcessEnv, url: string) =>
  checkOutboundUrl(url, { allowlist: allowlistOf(loadConfig(env)), resolver });

const refusal = (env: NodeJS.ProcessEnv, url: string) =>
  check(env, url).then(
    () => null,
    (e: unknown) => (e instanceof UrlRefusedError ? e.reason : String(e)),
  );

const LOOPBACK = [
  'http://localhost:4000/hook',
  'http://127.0.0.1:4100/invoke',
  'http://127.0.0.2/',
  'http://[::1]:4000/hook',
  'http://[::ffff:127.0.0.1]/',
];

describe('the development setup', () => {
  it('is what npm start runs with no settings, and loopback receivers pass the guard there', async () => {
    const config = loadConfig(DEV);
    expect(config.env).toBe('development');
    expect(config.loopbackOutbound).toBe(true);
    for (const url of LOOPBACK) expect(await refusal(DEV, url), url).toBeNull();
    // also with the loopback BASE_URL and HOST a reader may set by hand
    const explicit = { ...DEV, NODE_ENV: 'development', HOST: '::1', BASE_URL: 'http://127.0.0.1:3000' };
    expect(loadConfig(explicit).loopbackOutbound).toBe(true);
  });

  it('allows this machine only: the rest of the internal network stays refused', async () => {
    for (const url of [
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/',
      'http://0.0.0.0/',
      'http://[::]/',
      'https://intranet.example/',
    ])
      expect(await refusal(DEV, url), url).toBe('blocked_address');
  });

  // the abuse case: a production server must never get the development rule by accident. Each production-like
  // setting alone, on top of the development defaults, keeps loopback refused
  it.each([
    ['NODE_ENV=production', { NODE_ENV: 'production', SVC_SECRET: SECRET }],
    ['NODE_ENV=test', { NODE_ENV: 'test' }],
    ['HOST=0.0.0.0 (reachable from the network)', { HOST: '0.0.0.0' }],
    ['HOST=:: (reachable from the network)', { HOST: '::' }],
    ['HOST on a LAN address', { HOST: '192.168.1.20' }],
    ['a public BASE_URL', { BASE_URL: 'https://api.example.com' }],
    ['a proxy in front (SVC_TRUST_PROXY)', { SVC_TRUST_PROXY: 'loopback' }],
    ['PostgreSQL', { DATABASE_URL: 'postgres://svc@db.internal:5432/svc' }],
  ])('is off with %s: loopback receivers are refused as before', async (_name, extra) => {
    const env = { ...DEV, ...extra };
    expect(loadConfig(env).loopbackOutbound).toBe(false);
    for (const url of LOOPBACK) {
      const reason = await refusal(env, url);
      expect(reason === 'blocked_address' || reason === 'blocked_host', `${url}: ${reason}`).toBe(true);
    }
  });

  it('is off for a production deploy as docs/operations.md gives it, even with NODE_ENV forgotten', () => {
    const deploy = { ...DEV, BASE_URL: 'https://api.example.com', HOST: '0.0.0.0', SVC_SECRET: SECRET };
    expect(loadConfig({ ...deploy, NODE_ENV: 'production' }).loopbackOutbound).toBe(false);
    expect(loadConfig(deploy).loopbackOutbound).toBe(false);
  });

  it('keeps the operator allow-list beside it', async () => {
    const env = { ...DEV, SVC_SSRF_ALLOWLIST: '10.0.0.0/8' };
    expect(await refusal(env, 'http://10.0.0.1/')).toBeNull();
    expect(await refusal(env, 'http://127.0.0.1/')).toBeNull();
    expect(await refusal({ ...env, NODE_ENV: 'production', SVC_SECRET: SECRET }, 'http://127.0.0.1/')).toBe(
      'blocked_address',
    );
  });
});

describe('a server in the development setup', () => {
  it('registers a loopback receiver with no allow-list and delivers to it; production refuses it', async () => {
    const rx = await startReceiver([{ status: 204 }]);
    try {
      {
        // (the development setup is SQLite's by definition: on the PostgreSQL run too)
        await using t = await startTestServer({
          database: 'sqlite',
          env: { NODE_ENV: 'development', SVC_SSRF_ALLOWLIST: '' },
        });
        expect(t.rt.services.config.loopbackOutbound).toBe(true);
        const w = await createWorld(t.rt);
        const { webhook } = await createWebhook(t.rt.services, { roomId: w.roomId, url: rx.url });
        const r = await call(t, 'POST', `/v1/rooms/${w.roomId}/webhooks/${webhook.id}/test`, { key: w.key });
        expect(r.status).toBe(200);
        expect(r.body.outcome).toMatchObject({ success: true, statusCode: 204 });
        expect(rx.requests).toHaveLength(1);
        await createConnector(t.rt.services, {
          organizationId: w.orgId,
          name: 'Local agent',
          url: 'http://127.0.0.1:4100/invoke',
          scopes: ['mcp:tools', 'tasks:write'],
        });
      }
      {
        await using t = await startTestServer({
          env: { NODE_ENV: 'production', SVC_SECRET: SECRET, SVC_SSRF_ALLOWLIST: '' },
        });
        expect(t.rt.services.config.loopbackOutbound).toBe(false);
        const w = await createWorld(t.rt);
        await expect(createWebhook(t.rt.services, { roomId: w.roomId, url: rx.url })).rejects.toThrow(
          /internal or special address/,
        );
        await expect(
          createConnector(t.rt.services, {
            organizationId: w.orgId,
            name: 'Local agent',
            url: 'http://127.0.0.1:4100/invoke',
            scopes: ['mcp:tools'],
          }),
        ).rejects.toThrow(/internal or special address/);
        expect(rx.requests).toHaveLength(1);
      }
    } finally {
      await rx.close();
    }
  });
});
