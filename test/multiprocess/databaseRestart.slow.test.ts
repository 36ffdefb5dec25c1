import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// A PostgreSQL cluster of this test's own (never the shared one), restarted while writes with keys run.
const bin = fs
  .readdirSync('/usr/lib/postgresql')
  .sort((a, b) => Number(a) - Number(b))
  .map((v) => `/usr/lib/postgresql/${v}/bin`)
  .pop()!;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-restart-'));
const port = 54300 + Math.floor(Math.random() * 90);
const asPostgres = (cmd: string, args: string[]) =>
  process.getuid?.() === 0
    ? execFileSync('runuser', ['-u', 'postgres', '--', `${bin}/${cmd}`, ...args], { stdio: 'ignore' })
    : execFileSync(`${bin}/${cmd}`, args, { stdio: 'ignore' });
const pgCtl = (action: string) =>
  asPostgres('pg_ctl', [
    '-D',
    `${dir}/data`,
    '-l',
    `${dir}/log`,
    '-w',
    '-m',
    'fast',
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`,
    action,
  ]);

beforeAll(() => {
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  asPostgres('initdb', ['-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  pgCtl('start');
});

afterAll(() => {
  try {
    pgCtl('stop');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('a PostgreSQL restart under load', () => {
  it('answers 201 or 503 with Retry-After, never 500, and each key writes exactly one message', async () => {
    await using t = await startTestServer({ database: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const w = await createWorld(t.rt);
    const p = `/v1/rooms/${w.roomId}/messages`;
    const keys: string[] = [];
    const statuses: number[] = [];
    const send = async (key: string) => {
      const r = await call(t, 'POST', p, { key: w.key, body: { body: key }, headers: { 'Idempotency-Key': key } });
      statuses.push(r.status);
      if (r.status === 503) expect(r.headers.get('retry-after')).toBe('1');
      return r;
    };
    // each write is retried with its key until it is answered 201
    const write = async (key: string) => {
      for (let attempt = 0; attempt < 600; attempt++) {
        const r = await send(key);
        if (r.status === 201) return r.body.id as string;
        expect([503, 409]).toContain(r.status);
        await new Promise((res) => setTimeout(res, 200));
      }
      throw new Error(`${key} never succeeded`);
    };
    // new writes start every 20 ms until the cluster is back and 60 have started
    let restarted = false;
    const writes: Promise<string>[] = [];
    const load = (async () => {
      while (!restarted || keys.length < 60) {
        const key = `restart-${keys.length}`;
        keys.push(key);
        writes.push(write(key));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    while (statuses.length < 5) await new Promise((r) => setTimeout(r, 20));
    // down until the server has answered a few requests without it (connection refused), then up again
    pgCtl('stop');
    const down = statuses.length;
    while (statuses.slice(down).filter((s) => s === 503).length < 5) await new Promise((r) => setTimeout(r, 50));
    pgCtl('start');
    restarted = true;
    await load;
    const ids = await Promise.all(writes);
    expect(statuses).not.toContain(500);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(5);
    expect(new Set(ids).size).toBe(keys.length);
    const rows = await t.rt.services.ds.query(`SELECT body, count(*) AS n FROM messages GROUP BY body`);
    expect(rows).toHaveLength(keys.length);
    for (const r of rows) expect(Number(r.n)).toBe(1);
  });
});
