import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createWorld } from '../helpers/harness.js';
import { serverDatabase } from '../robustness/serverProcess.js';

const run = promisify(execFile);

// Operators run `npx svc …` on the SQLite file a running server uses. While the server takes a
// steady stream of writes, every command succeeds: it waits for the write lock as the server does (busy
// timeout, write transactions that take the lock when they begin) and retries a transient lock, so it never
// fails with `database is locked`.

const ROUNDS = 5;
const CLI_LOOPS = 2;
const WRITERS = 6;

describe('the operator CLI beside a busy server', () => {
  it(
    `${CLI_LOOPS}×${ROUNDS} rounds of room create, key create and audit list all exit 0 while the server takes writes`,
    { timeout: 600_000 },
    async () => {
      const db = await serverDatabase();
      const server = await db.start({ SVC_WORKER: 'off' });
      try {
        const rt = await db.open();
        const w = await createWorld(rt);
        await rt.close();
        const { BASE_URL: _vite, ...parent } = process.env;
        const env = { ...parent, ...db.env, LOG_LEVEL: 'silent' };
        const svc = async (...args: string[]) => {
          try {
            const { stdout, stderr } = await run(process.execPath, ['bin/svc.mjs', ...args, '--json'], {
              env,
              cwd: process.cwd(),
            });
            return { code: 0, stdout, stderr };
          } catch (e) {
            const err = e as { code?: number; stdout?: string; stderr?: string };
            return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
          }
        };

        let stop = false;
        let written = 0;
        const writer = async (n: number) => {
          for (let i = 0; !stop; i++) {
            const res = await fetch(`${server.base}/v1/rooms/${w.roomId}/messages`, {
              method: 'POST',
              headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ body: `writer ${n} message ${i}` }),
            });
            await res.arrayBuffer();
            if (res.status === 201) written++;
          }
        };
        const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));

        const failures: string[] = [];
        let succeeded = 0;
        const cliLoop = async (loop: number) => {
          for (let i = 0; i < ROUNDS; i++) {
            const outcomes = [
              await svc(
                'room',
                'create',
                '--name',
                `ops ${loop}-${i}`,
                '--created-by',
                w.owner.id,
                '--org',
                w.orgId,
                '--member',
                w.member.id,
              ),
              await svc(
                'key',
                'create',
                '--user',
                w.owner.id,
                '--org',
                w.orgId,
                '--name',
                `ci ${loop}-${i}`,
                '--scopes',
                'me:read',
                '--mode',
                'test',
              ),
              await svc('audit', 'list', '--limit', '5'),
            ];
            for (const o of outcomes) {
              if (o.code === 0 && o.stderr === '' && JSON.parse(o.stdout)) succeeded++;
              else failures.push(`exit ${o.code}: ${o.stderr.trim()}`);
            }
          }
        };
        try {
          await Promise.all(Array.from({ length: CLI_LOOPS }, (_, n) => cliLoop(n)));
        } finally {
          stop = true;
          await Promise.all(writers);
        }
        expect(failures).toEqual([]);
        expect(succeeded).toBe(CLI_LOOPS * ROUNDS * 3);
        // the server really was taking writes the whole time, and still is
        expect(written).toBeGreaterThan(0);
        expect(server.proc.exitCode).toBeNull();
      } finally {
        await server.stop();
        await db.remove();
      }
    },
  );
});
