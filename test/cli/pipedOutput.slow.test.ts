import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAudit } from '../../src/auth/audit.js';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-pipe-'));
const { BASE_URL: _ignored, ...parentEnv } = process.env;
const env = { ...parentEnv, DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`, DATA_DIR: dir, NODE_ENV: 'test' };
const ROWS = 3000;

beforeAll(async () => {
  const rt = await openRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  try {
    for (let i = 0; i < ROWS; i++)
      await writeAudit(rt.services, {
        requestId: `req_pipe_${String(i).padStart(6, '0')}`,
        surface: 'rest',
        method: 'GET',
        routePattern: '/v1/rooms/{roomId}/messages',
        statusCode: 200,
        authMethod: 'api_key',
        actor: 'user',
        delegatingUserId: null,
        scopes: ['messages:read', 'rooms:read'],
        organizationId: null,
        userId: null,
        apiKeyId: null,
        tokenId: null,
        units: 1,
        errorCode: null,
        agentRunId: null,
      });
  } finally {
    await rt.close();
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('operator CLI output through a pipe', () => {
  it('a JSON answer far larger than a pipe holds reaches a slow reader whole', async () => {
    // the reader takes nothing until the CLI has written everything it will (`sleep` first), so whatever the CLI
    // does not wait for is lost
    const cli = `"${process.execPath}" bin/svc.mjs audit list --json --limit ${ROWS}`;
    const { stdout } = await run('sh', ['-c', `${cli} | { sleep 1; cat; }`], {
      env,
      cwd: process.cwd(),
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(stdout.length).toBeGreaterThan(256 * 1024);
    const parsed = JSON.parse(stdout) as { data: { requestId: string }[] };
    expect(parsed.data).toHaveLength(ROWS);
    expect(new Set(parsed.data.map((r) => r.requestId)).size).toBe(ROWS);
  });
});
