import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { call, startTestServer } from '../helpers/harness.js';

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
// vitest (vite) sets BASE_URL=/ in process.env; the CLI must not inherit it
const { BASE_URL: _ignored, ...parentEnv } = process.env;
const env = { ...parentEnv, DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`, DATA_DIR: dir, NODE_ENV: 'test' };
const svc = async (...args: string[]) => {
  const { stdout, stderr } = await run(process.execPath, ['bin/svc.mjs', ...args, '--json'], {
    env,
    cwd: process.cwd(),
  });
  expect(stderr).toBe('');
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
};
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('operator CLI', () => {
  it('creates an organization, users, rooms and keys, prints exactly the contract JSON, and a served key works', async () => {
    const org = await svc('org', 'create', '--name', 'CLI Org');
    expect(Object.keys(org)).toEqual(['id']);
    expect(org.id).toMatch(/^org_/);
    const user = await svc(
      'user',
      'create',
      '--email',
      'cli@example.test',
      '--name',
      'Cli',
      '--password',
      'long enough pw',
      '--org',
      org.id,
      '--role',
      'owner',
    );
    expect(user.id).toMatch(/^usr_/);
    const other = await svc(
      'user',
      'create',
      '--email',
      'other@example.test',
      '--name',
      'Other',
      '--password',
      'long enough pw',
      '--locale',
      'ja',
    );
    expect(await svc('org', 'add-member', '--org', org.id, '--user', other.id, '--role', 'admin')).toEqual({});
    const room = await svc(
      'room',
      'create',
      '--name',
      'Ops',
      '--created-by',
      user.id,
      '--org',
      org.id,
      '--member',
      other.id,
    );
    expect(room.id).toMatch(/^room_/);
    const dm = await svc('room', 'create', '--name', 'dm', '--created-by', user.id, '--org', org.id, '--type', '1');
    expect(await svc('room', 'add-member', '--room', dm.id, '--user', other.id)).toEqual({});
    const key = await svc(
      'key',
      'create',
      '--user',
      user.id,
      '--org',
      org.id,
      '--name',
      'ci',
      '--scopes',
      'me:read,rooms:read',
      '--mode',
      'live',
    );
    expect(Object.keys(key)).toEqual(['id', 'token', 'prefix', 'last4']);
    expect(key.token).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe('svc_live_');
    expect(key.last4).toBe(key.token.slice(-4));

    await using t = await startTestServer({ env: { DATABASE_URL: env.DATABASE_URL }, dataDir: dir });
    const rooms = await call(t, 'GET', '/v1/rooms', { key: key.token });
    expect(rooms.body.data.map((r: any) => r.id)).toEqual([room.id]);
    expect(await svc('key', 'revoke', '--id', key.id)).toEqual({});
    expect((await call(t, 'GET', '/v1/me', { key: key.token })).status).toBe(401);
    const audit = await svc('audit', 'list', '--limit', '10');
    expect(audit.data[0]).toMatchObject({ routePattern: '/v1/me', statusCode: 401 });
    expect(Object.keys(audit.data[0])).toEqual([
      'requestId',
      'surface',
      'method',
      'routePattern',
      'statusCode',
      'authMethod',
      'actor',
      'delegatingUserId',
      'scopes',
      'organizationId',
      'userId',
      'apiKeyId',
      'tokenId',
      'units',
      'createdAt',
    ]);
    expect((await svc('audit', 'list', '--actor', 'app')).data.every((r: any) => r.actor === 'app')).toBe(true);
    expect((await svc('audit', 'list', '--since', '2999-01-01T00:00:00Z')).data).toEqual([]);
    expect(await svc('audit', 'purge')).toEqual({ deleted: 0 });
  }, 180_000);

  it('reports bad input on stderr with a non-zero exit and nothing on stdout', async () => {
    for (const args of [
      ['org', 'create'],
      ['key', 'create', '--user', 'usr_x', '--name', 'n', '--scopes', 'me:read', '--mode', 'prod'],
      ['user', 'create', '--email', 'bad', '--name', 'n', '--password', 'long enough pw'],
      ['nope', 'cmd'],
      ['key', 'revoke', '--id', 'key_missing'],
      ['org', 'create', '--name', 'x', '--bogus', '1'],
    ]) {
      const err = await run(process.execPath, ['bin/svc.mjs', ...args, '--json'], { env }).then(
        () => null,
        (e) => e as { code: number; stdout: string; stderr: string },
      );
      expect(err, args.join(' ')).not.toBeNull();
      expect(err!.code).toBeGreaterThan(0);
      expect(err!.stdout).toBe('');
      expect(err!.stderr.length).toBeGreaterThan(0);
    }
  }, 120_000);
});
