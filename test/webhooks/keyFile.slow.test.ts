import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = 150;

// One child: loads the key of each of DIRS fresh data directories, in turn, and prints them as JSON.
// Several children run at once over the same directories, so many of the loads race the key's creation.
const child = `
import { loadWebhookKey } from './src/webhooks/secretBox.ts';
const [root, n] = [process.env.KEY_ROOT, Number(process.env.KEY_DIRS)];
const keys = [];
for (let i = 0; i < n; i++) {
  try { keys.push(loadWebhookKey({ dataDir: root + '/d' + i }).toString('base64')); }
  catch (e) { keys.push('error: ' + e.message); }
}
console.log(JSON.stringify(keys));
`;

const runChild = (root: string) =>
  new Promise<string[]>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', child],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', KEY_ROOT: root, KEY_DIRS: String(DIRS) }, timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(JSON.parse(stdout))),
    );
  });

describe('the webhook key file', () => {
  it('is published whole: processes starting at once on a new data directory all read the same 32-byte key', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-keyfile-'));
    try {
      const results = await Promise.all(Array.from({ length: 4 }, () => runChild(root)));
      for (let i = 0; i < DIRS; i++) {
        const seen = new Set(results.map((keys) => keys[i]));
        expect([...seen], `data directory ${i}`).toHaveLength(1);
        expect(Buffer.from([...seen][0], 'base64'), `data directory ${i}`).toHaveLength(32);
        const dir = path.join(root, `d${i}`);
        expect(fs.readdirSync(dir)).toEqual(['webhook.key']); // no temporary file left behind
        expect(fs.statSync(path.join(dir, 'webhook.key')).mode & 0o777).toBe(0o600);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
