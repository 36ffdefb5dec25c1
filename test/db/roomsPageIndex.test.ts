import { describe, expect, it } from 'vitest';
import { isPostgres } from '../../db/sql.js';
import { createRoom } from '../../src/domain/rooms.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

/** The statement `listRooms` runs for an organization's owner (src/domain/rooms.ts), one page after a cursor. */
const ROOMS_PAGE =
  'SELECT r."id", r."name", r."roomType", r."organizationId", r."createdById", r."createdAt", r."updatedAt" FROM "rooms" r ' +
  'WHERE r."roomType" = 0 AND r."organizationId" = ? AND r."id" > ? ORDER BY r."id" ASC LIMIT ?';

describe('a page of GET /v1/rooms reads the organization rooms in id order from an index', () => {
  it('is planned on (organizationId, id) with no sort of every room of the organization', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    await s.ds.transaction(async (m) => {
      for (let i = 0; i < 120; i++) await createRoom(m, s.now(), { name: `r${i}`, createdById: w.owner.id, organizationId: w.orgId });
    });
    const page = await call(t, 'GET', '/v1/rooms?limit=50', { key: w.key });
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(50);
    if (isPostgres(s.ds)) {
      const rows = await s.ds.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'rooms'`);
      expect(rows.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/\("organizationId", id\)/);
    } else {
      const plan = (await s.ds.query(`EXPLAIN QUERY PLAN ${ROOMS_PAGE}`, [w.orgId, 'room_0', 51])) as { detail: string }[];
      const text = plan.map((p) => p.detail).join('\n');
      expect(text).toMatch(/IDX_rooms_organizationId_id/);
      expect(text).not.toMatch(/TEMP B-TREE/);
    }
  });
});
