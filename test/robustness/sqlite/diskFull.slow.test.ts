import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { call, createWorld, startTestServer } from '../../helpers/harness.js';
import { postMcp, toolCall } from '../../mcp/mcpClient.js';
import { integrityProblems } from '../integrity.js';

const TMPFS_BYTES = 64 * 1024;

/**
 * A DATA_DIR whose disk is full after 64 KiB: a tmpfs mounted for the test (root can mount one), or, where
 * mounting is not allowed, the same failure injected into the file writer (it writes half the bytes, then
 * fails with ENOSPC as a full disk does).
 */
function fullDisk(): { dataDir: string; how: 'tmpfs' | 'injected'; release(): void } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', dataDir], { stdio: 'ignore' });
    return {
      dataDir,
      how: 'tmpfs',
      release: () => {
        // lazy: detaches at once even while a closing read stream still holds a file there
        execFileSync('umount', ['-l', dataDir], { stdio: 'ignore' });
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch {
    const writeFile = fs.promises.writeFile.bind(fs.promises);
    // what the directory holds now, so that removing a file frees its space as on a real disk
    const used = (dir: string): number =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .reduce(
          (n, e) => n + (e.isDirectory() ? used(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size),
          0,
        );
    vi.spyOn(fs.promises, 'writeFile').mockImplementation(async (file, data, opts) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
      const free = TMPFS_BYTES - used(dataDir);
      if (!String(file).startsWith(dataDir) || bytes.length <= free) return writeFile(file, data, opts);
      await writeFile(file, bytes.subarray(0, Math.max(0, free)));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
      });
    });
    return { dataDir, how: 'injected', release: () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
}

const filesIn = (dir: string) =>
  fs.existsSync(path.join(dir, 'files')) ? fs.readdirSync(path.join(dir, 'files')) : [];

describe('disk full for uploads', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers 507 insufficient_storage in the envelope, leaves no partial file and no row, and works again once space is there', async () => {
    const disk = fullDisk();
    try {
      await using t = await startTestServer({
        env: {
          DATA_DIR: disk.dataDir,
          SVC_MAX_UPLOAD_BYTES: String(1024 * 1024),
          SVC_WEBHOOK_KEY: Buffer.alloc(32, 7).toString('base64'),
        },
      });
      const w = await createWorld(t.rt);
      const upload = (bytes: Buffer, name: string) =>
        t.fetch(`/v1/rooms/${w.roomId}/files?filename=${name}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/octet-stream' },
          body: bytes,
        });

      const small = await upload(Buffer.alloc(1000, 1), 'small.bin');
      expect(small.status).toBe(201);
      const big = await upload(Buffer.alloc(200 * 1024, 2), 'big.bin');
      const body: any = await big.json();
      expect(big.status, `${disk.how}: ${JSON.stringify(body)}`).toBe(507);
      expect(body.error).toMatchObject({ code: 'insufficient_storage', requestId: big.headers.get('x-request-id') });
      expect(JSON.stringify(body)).not.toMatch(/ENOSPC|\/tmp\/|svc-full/);

      const tool = await postMcp(
        t,
        toolCall('upload_file', {
          roomId: w.roomId,
          filename: 'big-mcp.bin',
          contentType: 'application/octet-stream',
          contentBase64: Buffer.alloc(150 * 1024, 3).toString('base64'),
        }),
        { token: w.key },
      );
      expect(tool.status).toBe(200);
      expect(tool.body.result.isError).toBe(true);
      expect(JSON.parse(tool.body.result.content[0].text).error.code).toBe('insufficient_storage');

      // no partial or temporary file, and exactly one file row: the small one
      const smallId = ((await small.json()) as { id: string }).id;
      expect(filesIn(disk.dataDir)).toEqual([smallId]);
      const rows = await t.rt.ds.query('SELECT "id" FROM "files"');
      expect(rows.map((r: { id: string }) => r.id)).toEqual([smallId]);
      expect(await integrityProblems(t.rt)).toEqual([]);

      // the space the failed uploads took was given back: a file that fits is stored
      const again = await upload(Buffer.alloc(20 * 1024, 4), 'fits.bin');
      expect(again.status).toBe(201);
      const content = await call(
        t,
        'GET',
        `/v1/rooms/${w.roomId}/files/${((await again.json()) as { id: string }).id}/content`,
        { key: w.key },
      );
      expect(content.status).toBe(200);
      expect(await integrityProblems(t.rt)).toEqual([]);
    } finally {
      disk.release();
    }
  });
});
