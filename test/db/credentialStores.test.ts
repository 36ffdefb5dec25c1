import { describe, expect, it } from 'vitest';
import { AuditEntry } from '../../db/entities/index.js';
import { AUDIT_COLUMNS, auditRows, auditRowValues, insertAuditRow } from '../../db/stores/audit.js';
import { chargeUnitUsage, refundUnitUsage, unitUsage } from '../../db/stores/units.js';
import { startTestServer } from '../helpers/harness.js';

// The stores of the request path, on either engine: the audit row's one column list is the entity's, and the unit
// ledger charges within its limit only, and gives back without going below zero.
describe('the stores of the request path', () => {
  it("write the audit row with the entity's every column, in the store's one list", async () => {
    await using t = await startTestServer();
    const { ds } = t.rt;
    const columns = ds.getMetadata(AuditEntry).columns.map((c) => c.propertyName);
    expect([...AUDIT_COLUMNS].sort()).toEqual([...columns].sort());
    const row = Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, null])) as Record<string, unknown>;
    Object.assign(row, {
      id: 'aud_store_1',
      requestId: 'req_store_1',
      surface: 'rest',
      method: 'GET',
      routePattern: '/v1/me',
      statusCode: 200,
      scopes: JSON.stringify(['rooms:read']),
      userId: 'usr_store_1',
      units: 1,
      createdAt: '2030-01-01T00:00:00.000Z',
    });
    await insertAuditRow(ds, auditRowValues(row as Parameters<typeof auditRowValues>[0]));
    const [read] = await auditRows(ds, { userId: 'usr_store_1' }, 10);
    expect(read).toMatchObject({ id: 'aud_store_1', routePattern: '/v1/me', scopes: ['rooms:read'], apiKeyId: null });
  });

  it('charge units only within the limit, and give them back never below zero', async () => {
    await using t = await startTestServer();
    const { ds } = t.rt;
    const entity = 'org:store-test';
    expect(await chargeUnitUsage(ds, entity, '2030-01', 3, 5)).toBe(3);
    expect(await chargeUnitUsage(ds, entity, '2030-01', 3, 5)).toBeNull();
    expect(await chargeUnitUsage(ds, entity, '2030-01', 2, 5)).toBe(5);
    expect(await unitUsage(ds, entity, '2030-01')).toBe(5);
    expect(await unitUsage(ds, entity, '2030-02')).toBe(0);
    await refundUnitUsage(ds, entity, '2030-01', 4);
    await refundUnitUsage(ds, entity, '2030-01', 4);
    expect(await unitUsage(ds, entity, '2030-01')).toBe(1);
  });
});
