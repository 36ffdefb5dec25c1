import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// `npm start` on a port that is taken: one line that says so and what to do, a non-zero exit, and nothing
// written (no database, no demo key printed that would never be served). A process test, so in the slow tier
// with the CLI's.
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('npm start on a port in use', () => {
  it('says so in one line, exits 1 and writes nothing', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-port-'));
    try {
      const { BASE_URL: _vite, ...parent } = process.env;
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...parent,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URL: `sqlite:${path.join(dir, 'svc.sqlite')}`,
          DATA_DIR: dir,
          NODE_ENV: 'development',
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toBe(
        `svc failed to start: port ${port} on 127.0.0.1 is already in use (another svc?): stop it, or set PORT, e.g. PORT=${port + 1} npm start\n`,
      );
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      taken.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
