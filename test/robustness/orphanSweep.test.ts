import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ORPHAN_GRACE_MS, sweepOrphanedUploads } from '../../src/domain/files.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

describe('sweeping the bytes of unfinished uploads', () => {
  it('removes old bytes no file row names and old temporary files, never a named file or anything recent', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const up = await t.fetch(`/v1/rooms/${w.roomId}/files?filename=kept.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'text/plain' },
      body: 'kept',
    });
    const kept = ((await up.json()) as { id: string }).id;
    const dir = path.join(t.dataDir, 'files');
    for (const name of ['file_01ORPHAN', '.file_01CUT.tmp', 'file_01RECENT'])
      fs.writeFileSync(path.join(dir, name), 'partial');
    const old = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
    for (const name of [kept, 'file_01ORPHAN', '.file_01CUT.tmp']) fs.utimesSync(path.join(dir, name), old, old);

    expect(await sweepOrphanedUploads(t.rt.ds.manager, t.dataDir, new Date())).toBe(2);
    expect(fs.readdirSync(dir).sort()).toEqual(['file_01RECENT', kept].sort());
    expect((await call(t, 'GET', `/v1/rooms/${w.roomId}/files/${kept}/content`, { key: w.key })).body).toBe('kept');
  });
});
