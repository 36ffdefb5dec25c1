import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OAuthClient } from '../../db/entities/index.js';
import { sha256Hex } from '../../src/domain/hashing.js';
import { createClient, redirectUriProblem } from '../../src/oauth/clientRegistry.js';
import { postForm, startOAuthServer } from './oauthHelpers.js';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/svc.mjs');

async function svc(env: Record<string, string>, args: string[]) {
  try {
    // a clean environment: vitest's own (BASE_URL=/ among others) is not the CLI's
    const r = await run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('svc client create', () => {
  it('registers public and confidential clients, the secret shown once and stored hashed', async () => {
    await using env = await startOAuthServer();
    const { t } = env;
    const dbEnv = t.env;
    const conf = await svc(dbEnv, [
      'client',
      'create',
      '--name',
      'Ops Agent',
      '--redirect-uri',
      'https://agent.example/cb',
      '--redirect-uri',
      'http://localhost:8765/cb',
      '--type',
      'confidential',
      '--kind',
      'agent',
      '--scopes',
      'me:read,mcp:tools',
      '--json',
    ]);
    expect(conf.stderr).toBe('');
    expect(conf.code).toBe(0);
    const out = JSON.parse(conf.stdout);
    expect(Object.keys(out).sort()).toEqual(['clientId', 'clientSecret']);
    expect(out.clientId).toMatch(/^cli_/);
    expect(out.clientSecret).toMatch(/^svc_cs_[A-Za-z0-9_-]{43}$/);
    const row = await t.rt.ds.getRepository(OAuthClient).findOneByOrFail({ id: out.clientId });
    expect(row).toMatchObject({
      name: 'Ops Agent',
      type: 'confidential',
      kind: 'agent',
      scopes: ['me:read', 'mcp:tools'],
      redirectUris: ['https://agent.example/cb', 'http://localhost:8765/cb'],
      secretHash: sha256Hex(out.clientSecret),
    });
    // the secret authenticates at the token endpoint
    const r = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      client_id: out.clientId,
      client_secret: out.clientSecret,
    });
    expect(r.body).toEqual({ error: 'invalid_request', error_description: 'code is required' });

    const pub = await svc(dbEnv, [
      'client',
      'create',
      '--name',
      'CLI',
      '--redirect-uri',
      'http://127.0.0.1:9000/cb',
      '--type',
      'public',
      '--json',
    ]);
    expect(pub.code).toBe(0);
    expect(JSON.parse(pub.stdout)).toEqual({ clientId: expect.stringMatching(/^cli_/), clientSecret: null });

    const bad = await svc(dbEnv, [
      'client',
      'create',
      '--name',
      'X',
      '--redirect-uri',
      'http://app.example/cb',
      '--type',
      'public',
      '--json',
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('must be https, or http on a loopback host');
    const noUri = await svc(dbEnv, ['client', 'create', '--name', 'X', '--type', 'public', '--json']);
    expect(noUri.code).toBe(2);
    const s = t.rt.services;
    await expect(
      s.ds.transaction((m) =>
        createClient(m, s.now(), {
          name: 'X',
          redirectUris: ['https://a.example/cb'],
          type: 'public',
          scopes: ['root'],
        }),
      ),
    ).rejects.toMatchObject({ code: 'validation_error', details: { unknown: ['root'] } });
  }, 60_000);

  it('accepts only https or loopback http redirect URIs', () => {
    for (const ok of [
      'https://app.example/cb',
      'https://app.example/cb?x=1',
      'http://localhost:3000/cb',
      'http://127.0.0.1/cb',
      'http://[::1]:8080/cb',
    ]) {
      expect(redirectUriProblem(ok)).toBeNull();
    }
    for (const bad of [
      'http://app.example/cb',
      'https://app.example/cb#frag',
      'https://user:pw@app.example/cb',
      'myapp://cb',
      '/relative',
      'javascript:alert(1)',
    ]) {
      expect(redirectUriProblem(bad)).not.toBeNull();
    }
  });
});

describe('svc client allow / disallow / approvals', () => {
  it('approves a client-id URL or an origin server-wide or for one organization, and withdraws it', async () => {
    await using env = await startOAuthServer();
    const { t, w } = env;
    const url = 'https://vscode.dev/oauth/client-metadata.json';
    const wide = await svc(t.env, ['client', 'allow', '--url', url, '--json']);
    expect(wide.stderr).toBe('');
    expect(JSON.parse(wide.stdout)).toEqual({
      id: expect.stringMatching(/^cla_/),
      url,
      organizationId: null,
      created: true,
    });
    const again = await svc(t.env, ['client', 'allow', '--url', url, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ url, created: false });
    const org = await svc(t.env, ['client', 'allow', '--url', 'https://claude.ai/', '--org', w.orgId, '--json']);
    expect(JSON.parse(org.stdout)).toMatchObject({ url: 'https://claude.ai', organizationId: w.orgId, created: true });
    const list = await svc(t.env, [
      'client',
      'approvals',
      '--url',
      'https://claude.ai/oauth/mcp-client.json',
      '--json',
    ]);
    expect(JSON.parse(list.stdout).approvals).toEqual([
      expect.objectContaining({ pattern: 'https://claude.ai', organizationId: w.orgId }),
    ]);

    for (const bad of ['http://vscode.dev/client.json', 'https://vscode.dev/client.json#x', 'not a url']) {
      const r = await svc(t.env, ['client', 'allow', '--url', bad, '--json']);
      expect(r.code, bad).not.toBe(0);
      expect(r.stdout).toBe('');
    }
    const noOrg = await svc(t.env, ['client', 'allow', '--url', url, '--org', 'org_nope', '--json']);
    expect(noOrg.code).not.toBe(0);
    expect(noOrg.stderr).toContain('Organization not found');

    const off = await svc(t.env, ['client', 'disallow', '--url', url, '--json']);
    expect(JSON.parse(off.stdout)).toEqual({ url, organizationId: null, removed: true });
    const after = await svc(t.env, ['client', 'approvals', '--url', url, '--json']);
    expect(JSON.parse(after.stdout).approvals).toEqual([]);
  }, 60_000);
});
