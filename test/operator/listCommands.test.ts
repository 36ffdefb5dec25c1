import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/command.js';
import { parseCommandLine } from '../../src/cli/usage.js';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';

// The operator's list commands, run in-process as `svc` runs them (the command line parsed by the CLI's own parser,
// the command's `run` on a runtime of a temporary database): each finds what was created, filters as its options
// say, and never prints a secret, a token or a hash.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-op-lists-'));
let rt: Runtime;

/** `svc <argv>` in-process: what `--json` would print. */
async function svc(...argv: string[]): Promise<Record<string, unknown>> {
  const parsed = parseCommandLine([...argv, '--json']);
  if (parsed.kind !== 'run') throw new Error(`not a command: ${argv.join(' ')}: ${parsed.text}`);
  return (parsed.cmd as Required<Pick<Command, 'run'>>).run(parsed.values, rt);
}
const ids = (r: Record<string, unknown>) =>
  (r.data as { id?: string; clientId?: string }[]).map((x) => x.id ?? x.clientId);

let org: string, other: string, owner: string, member: string, outsider: string, room: string, otherRoom: string;
let orgKey: { id: string; token: string }, personalKey: { id: string; token: string };
let webhook: { id: string; secret: string }, client: { clientId: string; clientSecret: string };

beforeAll(async () => {
  rt = await openRuntime(
    loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
      DATA_DIR: dir,
      SVC_SSRF_ALLOWLIST: '127.0.0.1/32',
    }),
  );
  org = (await svc('org', 'create', '--name', 'Acme')).id as string;
  other = (await svc('org', 'create', '--name', 'Globex')).id as string;
  const user = (email: string, name: string, ...rest: string[]) =>
    svc('user', 'create', '--email', email, '--name', name, '--password', 'long enough pw', ...rest).then(
      (r) => r.id as string,
    );
  owner = await user('owner@example.test', 'Olive', '--org', org, '--role', 'owner');
  member = await user('member@example.test', 'Max', '--org', org);
  outsider = await user('outsider@example.test', 'Otto', '--org', other, '--role', 'admin');
  room = (await svc('room', 'create', '--name', 'General', '--created-by', owner, '--org', org, '--member', member))
    .id as string;
  otherRoom = (await svc('room', 'create', '--name', 'Elsewhere', '--created-by', outsider, '--org', other))
    .id as string;
  const key = (...rest: string[]) =>
    svc('key', 'create', '--name', 'k', '--scopes', 'me:read,rooms:read', '--mode', 'test', ...rest) as Promise<{
      id: string;
      token: string;
    }>;
  orgKey = await key('--user', owner, '--org', org);
  personalKey = await key('--user', owner);
  await key('--user', outsider, '--org', other);
  webhook = (await svc(
    'webhook',
    'create',
    '--room',
    room,
    '--url',
    'http://127.0.0.1:9/hook',
    '--header',
    'Authorization: Bearer receiver-credential',
  )) as { id: string; secret: string };
  await svc('webhook', 'create', '--room', otherRoom, '--url', 'http://127.0.0.1:9/other');
  client = (await svc(
    'client',
    'create',
    '--name',
    'Dashboard',
    '--redirect-uri',
    'https://app.example/cb',
    '--type',
    'confidential',
  )) as { clientId: string; clientSecret: string };
});
afterAll(async () => {
  await rt?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('operator list commands', () => {
  it('org list: every organization with its name and number of members', async () => {
    const r = await svc('org', 'list');
    expect(r.data).toEqual([
      expect.objectContaining({ id: org, name: 'Acme', members: 2 }),
      expect.objectContaining({ id: other, name: 'Globex', members: 1 }),
    ]);
  });

  it('user list: every user, or with --org the members and their roles', async () => {
    expect(ids(await svc('user', 'list'))).toEqual([owner, member, outsider]);
    const r = await svc('user', 'list', '--org', org);
    expect(r.data).toEqual([
      expect.objectContaining({ id: owner, email: 'owner@example.test', name: 'Olive', role: 'owner' }),
      expect.objectContaining({ id: member, email: 'member@example.test', name: 'Max', role: 'member' }),
    ]);
    await expect(svc('user', 'list', '--org', 'org_missing')).rejects.toMatchObject({ code: 'not_found' });
  });

  it("room list --org: that organization's rooms only, with member counts; --org is required", async () => {
    const r = await svc('room', 'list', '--org', org);
    expect(r.data).toEqual([expect.objectContaining({ id: room, name: 'General', members: 2, createdById: owner })]);
    expect(ids(await svc('room', 'list', '--org', other))).toEqual([otherRoom]);
    await expect(svc('room', 'list')).rejects.toThrow('--org is required');
  });

  it('key list --user / --org: the keys of that user or organization, with prefix and last four, never the token', async () => {
    expect(ids(await svc('key', 'list', '--user', owner))).toEqual([orgKey.id, personalKey.id]);
    const byOrg = await svc('key', 'list', '--org', org);
    expect(ids(byOrg)).toEqual([orgKey.id]);
    expect(byOrg.data).toEqual([
      expect.objectContaining({
        prefix: 'svc_test_',
        last4: orgKey.token.slice(-4),
        scopes: ['me:read', 'rooms:read'],
      }),
    ]);
    expect(ids(await svc('key', 'list', '--user', owner, '--org', other))).toEqual([]);
    await svc('key', 'revoke', '--id', orgKey.id);
    expect((await svc('key', 'list', '--org', org)).data).toEqual([
      expect.objectContaining({ id: orgKey.id, revokedAt: expect.any(String) }),
    ]);
    await expect(svc('key', 'list')).rejects.toThrow('give --user or --org');
  });

  it('webhook list: every webhook, or one room’s with --room; header names but never their values', async () => {
    expect((await svc('webhook', 'list')).data).toHaveLength(2);
    const r = await svc('webhook', 'list', '--room', room);
    expect(r.data).toEqual([
      expect.objectContaining({ id: webhook.id, roomId: room, url: 'http://127.0.0.1:9/hook', active: true }),
    ]);
    expect((r.data as { customHeaders: string[] }[])[0].customHeaders).toEqual(['Authorization']);
  });

  it('client list: the registered OAuth clients, never a secret', async () => {
    const r = await svc('client', 'list');
    expect(r.data).toEqual([
      expect.objectContaining({ clientId: client.clientId, name: 'Dashboard', type: 'confidential', kind: 'app' }),
    ]);
  });

  it('no list prints a token, a secret, a password or any hash', async () => {
    const printed = JSON.stringify(
      await Promise.all([
        svc('org', 'list'),
        svc('user', 'list'),
        svc('room', 'list', '--org', org),
        svc('key', 'list', '--user', owner),
        svc('key', 'list', '--user', outsider),
        svc('webhook', 'list'),
        svc('client', 'list'),
      ]),
    );
    for (const secret of [orgKey.token, personalKey.token, webhook.secret, client.clientSecret, 'receiver-credential'])
      expect(printed).not.toContain(secret);
    expect(printed).not.toMatch(/hash|secretEnc|headersEnc|password|"token"/i);
  });
});
